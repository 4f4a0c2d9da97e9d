/**
 * A glob as a test of `/`-separated paths: `*` and `?` stay within one path segment, `**`
 * crosses segments (followed by a slash it also matches no directory at all), `{a,b}` is either
 * (nested braces too); every other character is itself. The glob comes from the model, so it is
 * never turned into a backtracking regular expression: it is compiled to an automaton and a test
 * takes time proportional to the path's length times the glob's, whatever both are. Throws on a
 * `{` that is not closed.
 */
export function globMatcher(glob: string): (path: string) => boolean {
  const automaton: State[] = [{ type: "match" }];
  const start = compileSequence(automaton, parse(glob), 0);
  return (path) => {
    let current = closure(automaton, [start]);
    for (const char of path) {
      const next: number[] = [];
      for (const index of current) {
        const state = automaton[index]!;
        if (state.type === "char" && state.accepts(char)) next.push(state.out);
      }
      if (next.length === 0) return false;
      current = closure(automaton, next);
    }
    return current.some((index) => automaton[index]!.type === "match");
  };
}

type Item =
  | { type: "literal"; char: string }
  /** `?`: one character, not `/`. */
  | { type: "one" }
  /** `*`: any characters but `/`. */
  | { type: "star" }
  /** `**`: any characters. */
  | { type: "globstar" }
  /** `**` + `/`: nothing, or anything ending with `/`. */
  | { type: "directories" }
  | { type: "either"; choices: Item[][] };

type State =
  | { type: "match" }
  | { type: "char"; accepts: (char: string) => boolean; out: number }
  | { type: "split"; outs: number[] };

function parse(glob: string): Item[] {
  const chars = [...glob];
  // The sequence being built at each open brace: the innermost last.
  const stack: { choices: Item[][] }[] = [];
  let sequence: Item[] = [];
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index]!;
    if (char === "*" && chars[index + 1] === "*") {
      const slash = chars[index + 2] === "/";
      sequence.push({ type: slash ? "directories" : "globstar" });
      index += slash ? 2 : 1;
    } else if (char === "*") sequence.push({ type: "star" });
    else if (char === "?") sequence.push({ type: "one" });
    else if (char === "{") {
      stack.push({ choices: [sequence] });
      sequence = [];
    } else if (char === "," && stack.length > 0) {
      stack.at(-1)!.choices.push(sequence);
      sequence = [];
    } else if (char === "}" && stack.length > 0) {
      const { choices } = stack.pop()!;
      const outer = choices.shift()!;
      outer.push({ type: "either", choices: [...choices, sequence] });
      sequence = outer;
    } else sequence.push({ type: "literal", char });
  }
  if (stack.length > 0) throw new Error(`invalid glob ${glob}: a "{" is not closed`);
  return sequence;
}

// Built back to front: each item is compiled knowing the state that follows it.
function compileSequence(automaton: State[], items: Item[], next: number): number {
  for (let index = items.length - 1; index >= 0; index--) next = compileItem(automaton, items[index]!, next);
  return next;
}

function compileItem(automaton: State[], item: Item, next: number): number {
  const add = (state: State): number => automaton.push(state) - 1;
  switch (item.type) {
    case "literal":
      return add({ type: "char", accepts: (char) => char === item.char, out: next });
    case "one":
      return add({ type: "char", accepts: (char) => char !== "/", out: next });
    case "star":
    case "globstar": {
      const loop = add({ type: "split", outs: [] });
      const step = add({
        type: "char",
        accepts: item.type === "star" ? (char) => char !== "/" : () => true,
        out: loop,
      });
      automaton[loop] = { type: "split", outs: [step, next] };
      return loop;
    }
    case "directories": {
      const loop = add({ type: "split", outs: [] });
      const step = add({ type: "char", accepts: () => true, out: loop });
      const slash = add({ type: "char", accepts: (char) => char === "/", out: next });
      automaton[loop] = { type: "split", outs: [step, slash] };
      return add({ type: "split", outs: [next, loop] });
    }
    case "either":
      return add({ type: "split", outs: item.choices.map((choice) => compileSequence(automaton, choice, next)) });
  }
}

// The states reachable from `from` without reading a character; each state once.
function closure(automaton: State[], from: number[]): number[] {
  const seen = new Set<number>();
  const pending = [...from];
  while (pending.length > 0) {
    const index = pending.pop()!;
    if (seen.has(index)) continue;
    seen.add(index);
    const state = automaton[index]!;
    if (state.type === "split") pending.push(...state.outs);
  }
  return [...seen];
}
