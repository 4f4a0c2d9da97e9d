/** A dependency graph: each file to the files it imports (files outside the map are ignored). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/**
 * One shortest cycle per strongly connected group of files, each written as the path that closes it
 * (`["a", "b", "a"]`), in a stable order. Empty when the graph has no cycle. One cycle per group, not
 * every cycle: breaking the printed one is the next step, and the rerun names the next.
 */
export function findCycles(graph: ImportGraph): string[][] {
  return stronglyConnected(graph)
    .filter((group) => group.length > 1 || (graph.get(group[0]!) ?? []).includes(group[0]!))
    .map((group) => shortestCycle(graph, group))
    .sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Tarjan's algorithm; each group is sorted so the cycle printed for it starts at a stable file. */
function stronglyConnected(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      group.push(member);
      if (member === node) break;
    }
    groups.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return groups;
}

/** Breadth-first from the group's first file back to itself, staying inside the group. */
function shortestCycle(graph: ImportGraph, group: readonly string[]): string[] {
  const start = group[0]!;
  const members = new Set(group);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const next of graph.get(node) ?? []) {
      if (next === start) return [...pathTo(node, cameFrom, start), start];
      if (!members.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      queue.push(next);
    }
  }
  return [start, start];
}

function pathTo(node: string, cameFrom: ReadonlyMap<string, string>, start: string): string[] {
  const path = [node];
  for (let at = node; at !== start; at = cameFrom.get(at)!) path.unshift(cameFrom.get(at)!);
  return path;
}
