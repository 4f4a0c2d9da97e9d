import type { Style } from "./ansi.ts";
import { openInBrowser } from "./open-browser.ts";
import { visibleLine } from "./visible-text.ts";

/** Shows a server's sign-in page to the user (`connectMcp`'s `oauth.openAuthorizationUrl`); `close` removes what opening left. */
export type SignInOpener = { open: (url: string, server: string) => void; close: () => void };

/**
 * The CLI's sign-in: prints the authorization URL (always: the browser may be on another
 * machine) with its host set apart, and opens it with `$BROWSER` or the platform's opener
 * (through an owner-only file, see `openInBrowser`).
 */
export function signInOpener(out: NodeJS.WritableStream, style: Style, env: NodeJS.ProcessEnv): SignInOpener {
  const removers: (() => void)[] = [];
  return {
    open: (url, server) => {
      const host = URL.canParse(url) ? new URL(url).host : "";
      // terminal-safe: the server's name, the host and the URL are made visible.
      out.write(
        `${style.bold(`● MCP server ${visibleLine(server)} needs you to sign in`)} ${style.dim(`(at ${visibleLine(host)})`)}. Open this page if no browser opens:\n  ${visibleLine(url)}\n`,
      );
      const remove = openInBrowser(url, env, process.platform, undefined, "the sign-in page");
      if (remove !== undefined) removers.push(remove);
    },
    close: () => {
      for (const remove of removers.splice(0)) remove();
    },
  };
}

/** `openAuthorizationUrl` where nobody can sign in now (no terminal): fails the connection, saying how to sign in. */
export function signInFirst(command: string): (url: string, server: string) => never {
  return (_url, server) => {
    throw new Error(`it needs you to sign in: run ${command} mcp login ${server} first`);
  };
}
