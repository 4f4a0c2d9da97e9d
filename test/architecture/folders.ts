import type { ImportGraph } from "./cycles.ts";
import type { ImportEdge } from "./imports.ts";

/**
 * The folder a src/ file belongs to in the folder graph: its first folder under src/ (`src/loop`,
 * `src/providers` for every provider), `src` for the root files. The public index is a node of its
 * own: it re-exports every folder and no folder imports it.
 */
export function folderOf(path: string): string {
  if (path === "src/index.ts") return path;
  return /^(src\/[^/]+)\//.exec(path)?.[1] ?? "src";
}

/**
 * Folder to folders imported, from the static imports between src/ files (type-only ones included: a
 * type shared by two folders lives below both). A folder's imports of itself are not edges.
 */
export function folderGraph(edges: readonly ImportEdge[], files: ReadonlySet<string>): ImportGraph {
  const graph = new Map<string, string[]>([...files].map((file) => [folderOf(file), []]));
  for (const edge of edges) {
    if (edge.dynamic || edge.target === undefined || !files.has(edge.target)) continue;
    const from = folderOf(edge.from);
    const to = folderOf(edge.target);
    const targets = graph.get(from)!;
    if (from !== to && !targets.includes(to)) targets.push(to);
  }
  return graph;
}
