import { existsSync } from "node:fs";
import { constants, open, readlink, type FileHandle } from "node:fs/promises";

/**
 * Opens the log at `path` (a real path: no symbolic link in it) for reading, and checks that what
 * was opened is that file: a symbolic link swapped in at its place is not followed (ELOOP), and on
 * Linux the descriptor's own path (`/proc/self/fd`, which the kernel answers and no swap can race)
 * must be `path`, so a directory of it swapped for a link leading elsewhere is refused too. Only a
 * regular file is read; a FIFO does not block the open. Throws (`ENOENT` when nothing is there),
 * the handle closed; every later read goes through the returned handle.
 */
export async function openLogFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: unknown) => {
      if ((error as { code?: unknown }).code === "ELOOP")
        throw new Error(`${path} is now a symbolic link: the viewer does not follow it`, { cause: error });
      throw error;
    },
  );
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file`);
    if (hasDescriptorPaths() && (await readlink(`/proc/self/fd/${handle.fd}`)) !== path)
      throw new Error(`${path} was moved, or a directory on its way replaced: the viewer does not follow it`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

let descriptorPaths: boolean | undefined;

function hasDescriptorPaths(): boolean {
  descriptorPaths ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return descriptorPaths;
}
