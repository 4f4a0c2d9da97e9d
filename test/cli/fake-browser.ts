// A browser for the CLI's tests, started as $BROWSER with the page the CLI opens (an owner-only
// HTML file redirecting to the sign-in URL): it follows the URL as a user who signs in would, to
// the CLI's redirect listener. Each URL it was given is appended to the file named by
// FAKE_BROWSER_LOG, so the test can see what was opened.
import { appendFileSync, readFileSync } from "node:fs";

const page = readFileSync(process.argv[2]!, "utf8");
const target = /content="0;url=([^"]*)"/
  .exec(page)![1]!
  .replace(/&quot;/g, '"')
  .replace(/&lt;/g, "<")
  .replace(/&gt;/g, ">")
  .replace(/&amp;/g, "&");
if (process.env.FAKE_BROWSER_LOG !== undefined) appendFileSync(process.env.FAKE_BROWSER_LOG, `${target}\n`);
const authorize = await fetch(target, { redirect: "manual" });
const callback = authorize.headers.get("location");
if (callback !== null) await fetch(callback);
