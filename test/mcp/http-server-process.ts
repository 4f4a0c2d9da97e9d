// The HTTP fixture server in a process of its own, so a test can kill it mid-call:
// `node http-server-process.ts [--resumable] [--tag <text>]` prints the server's URL on stdout once it listens.
import { startHttpServer } from "./http-server.ts";

const server = await startHttpServer({ resumable: process.argv.includes("--resumable") });
process.stdout.write(`${server.url}\n`);
