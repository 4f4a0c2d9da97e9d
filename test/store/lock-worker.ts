// A worker thread that opens a session file, and closes it when told to (lock.test.ts).
import { parentPort, workerData } from "node:worker_threads";
import { closeSession, openSession } from "../../src/store/index.ts";

const session = await openSession((workerData as { path: string }).path);
parentPort!.once("message", () => {
  void closeSession(session).then(() => parentPort!.postMessage("closed"));
});
parentPort!.postMessage("open");
