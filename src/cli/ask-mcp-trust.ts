import type { Style } from "./ansi.ts";
import type { McpTrustAnswer } from "./mcp-tools.ts";
import type { TerminalInput } from "./terminal-input.ts";

/**
 * Asks on the terminal whether to start the MCP servers a workspace configures (`servers`: one
 * line each, what it runs or reaches): `y` (this time), `a` (always, while the file is unchanged)
 * or `n`. The end of input means no; Ctrl-C calls `onInterrupt`.
 */
export async function askMcpTrust(input: TerminalInput, out: NodeJS.WritableStream, style: Style, servers: string, onInterrupt: () => void): Promise<McpTrustAnswer> {
  out.write(`${style.bold("● This workspace configures MCP servers, which run as commands or reach URLs:")}\n${servers}`);
  for (;;) {
    const answer = await input.question(`${style.yellow("?")} Start them? ${style.dim("[y]es this time · [a]lways for this config · [n]o")} `);
    if (answer.type === "interrupt") {
      onInterrupt();
      return "no";
    }
    if (answer.type === "end") return "no";
    const key = answer.text.trim().toLowerCase();
    if (key === "y" || key === "yes") return "once";
    if (key === "a" || key === "always") return "always";
    if (key === "n" || key === "no") return "no";
    out.write(style.dim("  Answer y, a or n.\n"));
  }
}
