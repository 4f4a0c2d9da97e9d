import type { ImportEdge } from "./imports.ts";

/** The session, its content parts and its one walk over turns (a pure view over the messages): every layer may read them. */
export const sessionFiles = ["src/session.ts", "src/session-turns.ts", "src/content-parts.ts"];

/** The files at the src/ root that are part of the core; `src/index.ts` is only the public surface over them. */
export const rootFiles = [...sessionFiles, "src/errors.ts", "src/logger.ts", "src/numeric-options.ts"];

/** How many `.ts` files the src/ root may hold: the root files above and the public index. */
export const maxRootFiles = 7;

/**
 * The core: what every agent runs (the session, errors, the model contract, tools, the loop, and the agents above it). It must not
 * depend on anything built around it, so a subsystem can be dropped without touching the core.
 */
export function isCore(path: string): boolean {
  return (
    isRootFile(path) ||
    ["src/shared/", "src/model/", "src/tools/", "src/guardrails/", "src/loop/", "src/agents/"].some((folder) =>
      path.startsWith(folder),
    )
  );
}

/** A `.ts` file directly in src/ (not in a folder). */
export function isRootFile(path: string): boolean {
  return /^src\/[^/]+\.ts$/.test(path);
}

/**
 * Providers depend only on the model contract, the session, errors, numeric options, the tool schema
 * type (`src/shared/tool-schema.ts`: a provider converts schemas and never runs a tool), the shared
 * files of src/providers/ and their own folder; never on another provider. So an adapter can be read, tested and replaced without the loop.
 */
export function providerImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  const allowedFiles = [...sessionFiles, "src/errors.ts", "src/numeric-options.ts"];
  return sourceEdges(edges, (from) => from.startsWith("src/providers/")).filter(
    ({ from, target, typeOnly }) =>
      !(
        target.startsWith("src/model/") ||
        allowedFiles.includes(target) ||
        (typeOnly && target === "src/shared/tool-schema.ts") ||
        /^src\/providers\/[^/]+$/.test(target) ||
        (providerFolder(target) !== undefined && providerFolder(target) === providerFolder(from))
      ),
  );
}

/**
 * The model contract depends only on itself, the root files and src/shared/ (the tool schema type, the
 * abort race): it is what providers implement, below the tools and the loop.
 */
export function modelImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  return sourceEdges(edges, (from) => from.startsWith("src/model/")).filter(
    ({ target }) =>
      !(target.startsWith("src/model/") || rootFiles.includes(target) || target.startsWith("src/shared/")),
  );
}

/**
 * Guardrails sit between the tools and the loop: they check texts and tool calls (the session, the
 * tool hooks they wrap, the shared abort race) and know nothing of the loop or the agents that run them.
 */
export function guardrailImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  return sourceEdges(edges, (from) => from.startsWith("src/guardrails/")).filter(
    ({ target }) =>
      !(
        rootFiles.includes(target) ||
        ["src/guardrails/", "src/shared/", "src/model/", "src/tools/"].some((folder) => target.startsWith(folder))
      ),
  );
}

/** The core never imports a subsystem (store, viewer, cli, otel, mcp, restate, testing, providers, or any folder added beside them). */
export function coreImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  return sourceEdges(edges, isCore).filter(({ target }) => target.startsWith("src/") && !isCore(target));
}

/**
 * The core loads a package only when a run uses it: an optional peer (QuickJS for code mode, say)
 * only by a lazy `import()`, so a core without it installed still loads, and a run that does not use
 * it pays nothing. A type-only import is erased and allowed. `optionalPeers`: the package names.
 */
export function corePeerImportViolations(edges: readonly ImportEdge[], optionalPeers: readonly string[]): ImportEdge[] {
  return edges.filter(
    (edge) =>
      isCore(edge.from) &&
      edge.target === undefined &&
      !edge.dynamic &&
      !edge.typeOnly &&
      optionalPeers.includes(packageName(edge.specifier)),
  );
}

// `@scope/name` or `name`, without a subpath.
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** The store keeps sessions on disk and needs nothing of the library but the session and its errors. */
export function storeImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  return sourceEdges(edges, (from) => from.startsWith("src/store/")).filter(
    ({ target }) => !(target.startsWith("src/store/") || sessionFiles.includes(target) || target === "src/errors.ts"),
  );
}

/** Shipped code never reaches into the tests or the benchmarks (neither is published). */
export function testImportViolations(edges: readonly ImportEdge[]): ImportEdge[] {
  return sourceEdges(edges, (from) => from.startsWith("src/")).filter(
    ({ target }) => target.startsWith("test/") || target.startsWith("bench/"),
  );
}

/** The edges from files `from` selects that name another file of the repository (packages and builtins are not layers). */
function sourceEdges(
  edges: readonly ImportEdge[],
  from: (path: string) => boolean,
): (ImportEdge & { target: string })[] {
  return edges.filter((edge): edge is ImportEdge & { target: string } => edge.target !== undefined && from(edge.from));
}

/** `src/providers/<name>` for a file of one provider; undefined for a shared file of src/providers/ or any other file. */
function providerFolder(path: string): string | undefined {
  return /^(src\/providers\/[^/]+)\//.exec(path)?.[1];
}
