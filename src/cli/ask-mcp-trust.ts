import type { Style } from "./ansi.ts";
import type { McpConfigDescription } from "./describe-mcp-config.ts";
import type { McpTrustAnswer } from "./mcp-tools.ts";
import type { TerminalInput } from "./terminal-input.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * Asks on the terminal whether to start the MCP servers a workspace configures: shows what each
 * runs or reaches, every env entry and header it sends, and which of the user's environment
 * variables go with them (credentials flagged), then reads one key, no Enter needed: `y` (this
 * time), `a` (always, while the file is unchanged) or `n`. Ctrl-D means no; Ctrl-C calls `onInterrupt`.
 */
export async function askMcpTrust(
  input: TerminalInput,
  out: NodeJS.WritableStream,
  style: Style,
  config: McpConfigDescription,
  onInterrupt: () => void,
): Promise<McpTrustAnswer> {
  // terminal-safe: describeMcpConfig makes every name, command and argument in `config.text` visible.
  out.write(
    `${style.bold("● This workspace configures MCP servers, which run as commands or reach URLs:")}\n${config.text}`,
  );
  if (config.variables.length > 0) {
    const names = config.variables.map((name) =>
      config.credentials.includes(name) ? style.red(`${visibleLine(name)} (a credential)`) : visibleLine(name),
    );
    out.write(`${style.yellow("  ⚠ They are sent these variables of your environment:")} ${names.join(", ")}\n`);
  }
  for (;;) {
    const answer = await input.key(
      `${style.yellow("?")} Start them? ${style.dim("[y] yes this time · [a] always for this config · [n] no (press a key)")} `,
    );
    if (answer.type === "interrupt") {
      onInterrupt();
      return "no";
    }
    if (answer.type === "end") return "no";
    const key = answer.key.toLowerCase();
    if (key === "y") return "once";
    if (key === "a") return "always";
    if (key === "n") return "no";
    out.write(style.dim("  Press y, a or n.\n"));
  }
}
