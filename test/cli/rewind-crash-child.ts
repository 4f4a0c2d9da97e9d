// A child process for the rewind crash test: opens a stored session, plans a rewind to before
// user turn <turn> and runs it; after its <stop>-th file it says so on stdout and blocks, so the
// parent's SIGKILL lands exactly there. The rewind is marked in the workspace as the CLI marks it.
//   node --conditions=simple-agent-loop-source test/cli/rewind-crash-child.ts <sessions> <id> <workspace> <turn> <stop>
import { writeSync } from "node:fs";
import { dirname } from "node:path";
import { fileStore } from "simple-agent-loop/store";
import { rewindMarker } from "../../src/cli/rewind-marker.ts";
import { planRewind, userTurns } from "../../src/cli/rewind-plan.ts";
import { rewindSession } from "../../src/cli/rewind.ts";
import { blobDirectory, fileBlobStore } from "../../src/store/blobs.ts";

const [sessions, id, root, turn, stop] = process.argv.slice(2);
if (sessions === undefined || id === undefined || root === undefined || turn === undefined || stop === undefined)
  throw new Error("usage: rewind-crash-child.ts <sessions> <id> <workspace> <turn> <stop>");
const store = fileStore(sessions);
const session = await store.open(id);
const plan = await planRewind(session.messages, userTurns(session.messages)[Number(turn) - 1]!, root);
let done = 0;
await rewindSession(session, plan, {
  root,
  blobs: fileBlobStore(blobDirectory(store.path(id)), { sync: true }),
  // As the CLI marks it, in its home (the directory above the sessions).
  marker: rewindMarker(dirname(sessions), root, id),
  onStep: (path) => {
    if (++done !== Number(stop)) return;
    writeSync(1, `${JSON.stringify({ stopped: path })}\n`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20_000);
    process.exit(3);
  },
});
writeSync(1, `${JSON.stringify({ done: true })}\n`);
