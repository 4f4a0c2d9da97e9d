import { constants, existsSync, type Dirent, type Stats } from "node:fs";
import { randomBytes } from "node:crypto";
import {
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  stat,
  unlink,
  type FileHandle,
} from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { codeOf, isInside, type WorkspacePath } from "./workspace-path.ts";

/**
 * A regular file or a directory of the workspace, opened once and verified: every byte the tools
 * read or write goes through `handle`, never through the name again, so nothing swapped in
 * after the check (a symbolic link, a parent directory moved) is reached. The caller must
 * `close` it.
 */
export type OpenedEntry = {
  handle: FileHandle;
  /** The opened file's own status (fstat): its type, size and link count are what was verified. */
  stats: Stats;
  /** Whether `createInWorkspace` created the file (it did not exist). */
  created: boolean;
  /**
   * The directories `createInWorkspace` created on the way to the file (they were missing),
   * relative to the workspace, outermost first; empty when it created none.
   */
  createdDirectories?: string[];
  close: () => Promise<void>;
};

/**
 * Why `openInWorkspace` refused a file, for tools that skip such files with a note (grep):
 * `not-regular` (a FIFO, socket or device), `hard-links` (several links), `moved` (it changed
 * and now lies outside). Other refusals (missing, a link swapped in) are plain Errors.
 */
export class WorkspaceFileError extends Error {
  override name = "WorkspaceFileError";
  readonly reason: "not-regular" | "hard-links" | "moved";
  constructor(message: string, reason: WorkspaceFileError["reason"], options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** `read`: read-only. `update`: read and write, the file must exist (never truncated by opening). */
export type Access = "read" | "update";

/**
 * Opens `target` (resolved by `resolveInWorkspace`, so its path has no symbolic link left) and
 * verifies what was opened. The last component is opened with O_NOFOLLOW (a link swapped in is
 * refused, not followed) and O_NONBLOCK (a FIFO or device never blocks the open). Then, before a
 * byte moves: the descriptor's own path (Linux: /proc/self/fd; elsewhere the device and inode of a
 * fresh real path) must lie inside `root`; it must be a regular file or a directory; a regular
 * file must have exactly one link, since another hard link may name it from outside the workspace.
 * Throws an Error the model can act on, the descriptor closed.
 */
export async function openInWorkspace(root: string, target: WorkspacePath, access: Access): Promise<OpenedEntry> {
  const flags =
    (access === "read" ? constants.O_RDONLY : constants.O_RDWR) | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await openOrExplain(target.absolute, flags, target.display);
  return verified(root, handle, target, false);
}

/**
 * Opens a file to write it, creating it (and its missing parent directories) when it does not
 * exist. Each directory from `root` down is opened by name relative to the one before
 * (O_DIRECTORY|O_NOFOLLOW, through /proc/self/fd on Linux) and created there when missing, and
 * the file is created with O_CREAT|O_EXCL|O_NOFOLLOW in that verified directory: a link swapped
 * into the path is refused, never followed, and nothing is created outside. An existing file is
 * opened as `openInWorkspace` does, with the same checks.
 */
export async function createInWorkspace(root: string, target: WorkspacePath): Promise<OpenedEntry> {
  const parent = dirname(target.absolute);
  const createdDirectories: string[] = [];
  if (!hasDescriptorPaths()) {
    // Without /proc the directories are made by name; the file is still verified once open.
    const first = await mkdir(parent, { recursive: true });
    if (first !== undefined)
      for (let directory = parent; isInside(first, directory); directory = dirname(directory))
        createdDirectories.unshift(relative(root, directory));
    const handle = await createOrOpen(target.absolute, target.display);
    return { ...(await verified(root, handle.handle, target, handle.created)), createdDirectories };
  }
  const directory = await openDirectoryChain(root, parent, createdDirectories);
  try {
    const opened = await createOrOpen(join(descriptorPath(directory), basename(target.absolute)), target.display);
    return { ...(await verified(root, opened.handle, target, opened.created)), createdDirectories };
  } finally {
    await directory.close();
  }
}

/**
 * Replaces the file at `target` with `bytes` atomically: they are written to a new temporary file
 * beside it, forced to the disk, and renamed over the name, so a crash leaves the old file or the
 * new one, never a mix. Missing parent directories are created, inside verified directories as
 * `createInWorkspace` does; a symbolic link at the name is replaced, never followed; the mode of
 * the file replaced is kept (`mode` is the one for a file that is not there). For a rewind putting
 * back what a file held.
 */
export async function replaceInWorkspace(
  root: string,
  target: WorkspacePath,
  bytes: Uint8Array,
  mode?: number,
): Promise<void> {
  await inParentDirectory(root, target, async (directory, name) => {
    const kept = await lstat(join(directory, name)).then(
      (stats) => (stats.isFile() ? stats.mode & 0o7777 : undefined),
      () => mode,
    );
    const temporary = join(directory, `.${name}.${randomBytes(6).toString("hex")}.tmp`);
    const handle = await open(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o666,
    );
    try {
      try {
        if (kept !== undefined) await handle.chmod(kept);
        for (let written = 0; written < bytes.length;)
          written += (await handle.write(bytes, written, bytes.length - written, written)).bytesWritten;
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, join(directory, name));
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw explainOpenError(error, target.display);
    }
  });
}

/** Removes the file (or the symbolic link: never its target) at `target`, through its verified directory. */
export async function removeInWorkspace(root: string, target: WorkspacePath): Promise<void> {
  await inParentDirectory(root, target, async (directory, name) => {
    await unlink(join(directory, name)).catch((error: unknown) => {
      if (codeOf(error) !== "ENOENT") throw explainOpenError(error, target.display);
    });
  });
}

/**
 * Removes the directory at `target` if it is empty, through its verified parent directory.
 * Resolves false when it is not empty (or is no longer a directory: a link put in its place is
 * never followed) and is left as it is.
 */
export async function removeEmptyDirectoryInWorkspace(root: string, target: WorkspacePath): Promise<boolean> {
  let removed = false;
  await inParentDirectory(root, target, async (directory, name) => {
    removed = await rmdir(join(directory, name)).then(
      () => true,
      (error: unknown) => {
        if (["ENOTEMPTY", "EEXIST", "ENOTDIR", "ENOENT"].includes(codeOf(error) ?? "")) return false;
        throw explainOpenError(error, target.display);
      },
    );
  });
  return removed;
}

// Runs `change` with the verified parent directory of `target` (a path to reach it by) and the
// file's name in it, then forces the directory's entries to the disk.
async function inParentDirectory(
  root: string,
  target: WorkspacePath,
  change: (directory: string, name: string) => Promise<void>,
): Promise<void> {
  const parent = dirname(target.absolute);
  const name = basename(target.absolute);
  if (!hasDescriptorPaths()) {
    await mkdir(parent, { recursive: true });
    await change(parent, name);
    return;
  }
  const directory = await openDirectoryChain(root, parent);
  try {
    await change(descriptorPath(directory), name);
    await directory.sync().catch(() => undefined);
  } finally {
    await directory.close();
  }
}

// Opens `directory` (inside `root`) one component at a time from `root`, each by name relative to
// the one before (O_DIRECTORY|O_NOFOLLOW through /proc/self/fd), creating the missing ones (their
// paths relative to `root` added to `created`), and verifies where it ended. Linux only; the
// caller closes the descriptor.
async function openDirectoryChain(root: string, directory: string, created: string[] = []): Promise<FileHandle> {
  let opened = await openOrExplain(root, directoryFlags, ".");
  try {
    const parts = relative(root, directory)
      .split(sep)
      .filter((part) => part !== "");
    for (const [index, part] of parts.entries()) {
      const shown = parts.slice(0, index + 1).join("/");
      const name = join(descriptorPath(opened), part);
      await mkdir(name).then(
        () => created.push(shown),
        (error: unknown) => {
          if (codeOf(error) !== "EEXIST") throw error;
        },
      );
      const next = await openOrExplain(name, directoryFlags, shown);
      await opened.close();
      opened = next;
    }
    await verifyLocation(root, opened, relative(root, directory) || ".");
    return opened;
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * The entries of a directory of the workspace, read through one verified descriptor (the
 * directory is opened with O_DIRECTORY|O_NOFOLLOW and must lie inside `root`), so a directory
 * swapped for a link to elsewhere is refused rather than listed.
 */
export async function readDirectoryInWorkspace(root: string, path: string, display: string): Promise<Dirent[]> {
  const handle = await openOrExplain(path, directoryFlags, display);
  try {
    await verifyLocation(root, handle, display, path);
    return await readdir(hasDescriptorPaths() ? descriptorPath(handle) : path, { withFileTypes: true });
  } finally {
    await handle.close();
  }
}

/** Reads at most `length` bytes from `position`; fewer at the end of the file. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Replaces the whole content of an opened file through its descriptor. */
export async function replaceContent(handle: FileHandle, content: string | Uint8Array): Promise<void> {
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  await handle.truncate(0);
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
    written += bytesWritten;
  }
}

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

async function verified(
  root: string,
  handle: FileHandle,
  target: WorkspacePath,
  created: boolean,
): Promise<OpenedEntry> {
  try {
    const stats = await handle.stat();
    await verifyLocation(root, handle, target.display, target.absolute, stats);
    if (!stats.isFile() && !stats.isDirectory()) {
      throw new WorkspaceFileError(
        `${target.display} is ${kindOf(stats)}, not a regular file; the file tools read and write regular files only`,
        "not-regular",
      );
    }
    if (stats.isFile() && stats.nlink > 1) {
      throw new WorkspaceFileError(
        `${target.display} has ${stats.nlink} hard links: another of its names may be outside the workspace, so the file tools neither read nor change it`,
        "hard-links",
      );
    }
    return { handle, stats, created, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

// Linux names every open descriptor's file in /proc/self/fd; the kernel's answer cannot be raced.
async function verifyLocation(
  root: string,
  handle: FileHandle,
  display: string,
  path?: string,
  stats?: Stats,
): Promise<void> {
  let actual: string | undefined;
  if (hasDescriptorPaths()) {
    actual = await readlink(descriptorPath(handle));
  } else if (path !== undefined) {
    const fresh = await realpath(path).catch(() => undefined);
    const now = fresh === undefined ? undefined : await stat(fresh).catch(() => undefined);
    const opened = stats ?? (await handle.stat());
    if (fresh !== undefined && now !== undefined && now.dev === opened.dev && now.ino === opened.ino) actual = fresh;
  } else {
    return;
  }
  if (actual === undefined || !isInside(root, actual)) {
    throw new WorkspaceFileError(
      `${display} changed while it was being opened and now lies outside the workspace (${root}); it was not used`,
      "moved",
    );
  }
}

async function openOrExplain(path: string, flags: number, display: string): Promise<FileHandle> {
  try {
    return await open(path, flags);
  } catch (error) {
    throw explainOpenError(error, display);
  }
}

async function createOrOpen(path: string, display: string): Promise<{ handle: FileHandle; created: boolean }> {
  try {
    return {
      handle: await open(
        path,
        constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        0o666,
      ),
      created: true,
    };
  } catch (error) {
    if (codeOf(error) !== "EEXIST") throw explainOpenError(error, display);
  }
  return {
    handle: await openOrExplain(path, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK, display),
    created: false,
  };
}

function explainOpenError(error: unknown, display: string): Error {
  switch (codeOf(error)) {
    case "ELOOP":
      return new Error(`${display} is a symbolic link (swapped in while it was being opened?); it is not followed`, {
        cause: error,
      });
    case "ENOENT":
      return new Error(`${display} does not exist`, { cause: error });
    case "ENOTDIR":
      return new Error(`${display} is not a directory, or a part of its path is not`, { cause: error });
    case "EISDIR":
      return new Error(`${display} is a directory`, { cause: error });
    case "EACCES":
    case "EPERM":
      // The system's message names the /proc/self/fd path the file was opened by, not the model's.
      return new Error(`${display}: permission denied`, { cause: error });
    case "ENXIO":
    case "ENODEV":
    case "EOPNOTSUPP":
      return new WorkspaceFileError(
        `${display} is not a regular file (a FIFO, socket or device); the file tools read and write regular files only`,
        "not-regular",
        { cause: error },
      );
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "something else";
}

function descriptorPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

let descriptorPaths: boolean | undefined;

function hasDescriptorPaths(): boolean {
  descriptorPaths ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return descriptorPaths;
}
