/**
 * A glob as a regular expression over `/`-separated paths: `*` and `?` stay within one path
 * segment, `**` crosses segments (followed by a slash it also matches no directory at all), `{a,b}` is either.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  let braces = 0;
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!;
    if (char === "*" && glob[index + 1] === "*") {
      const slash = glob[index + 2] === "/";
      source += slash ? "(?:.*/)?" : ".*";
      index += slash ? 2 : 1;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else if (char === "{") {
      braces++;
      source += "(?:";
    } else if (char === "}" && braces > 0) {
      braces--;
      source += ")";
    } else if (char === "," && braces > 0) source += "|";
    else source += char.replace(/[.+^$(){}|[\]\\]/g, "\\$&");
  }
  if (braces > 0) throw new Error(`invalid glob ${glob}: a "{" is not closed`);
  return new RegExp(`^${source}$`);
}
