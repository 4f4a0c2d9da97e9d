import { errorMessage } from "../../errors.ts";
import type { McpServerStatus } from "../mcp-tools.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import type { Style } from "../ansi.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/**
 * `/mcp`: each MCP server with what it said it is (name, version, protocol), its sign-in state,
 * how many tools it offers and which are held because they changed since they were trusted;
 * then, when some are held, offers to review them (the diff, and a question for each).
 */
export const mcpCommand: SlashCommand = {
  name: "mcp",
  summary: "the MCP servers: version, sign-in, tools, and tools held since they changed",
  run: async (_argument, { mcp, out, style, input }) => {
    try {
      const servers = (await mcp?.status()) ?? [];
      if (mcp === undefined || servers.length === 0) {
        out.write("No MCP servers (see --mcp-config).\n");
        return goOn;
      }
      // terminal-safe: describeServer makes every name, version and URL of the servers visible.
      out.write(servers.map((server) => describeServer(server, style)).join(""));
      const held = servers.reduce((count, server) => count + server.held.length, 0);
      if (held === 0) return goOn;
      const answer = await input.key(
        `${style.yellow("?")} Review the held ${held === 1 ? "tool" : "tools"} now? ${style.dim("[y] yes · [n] no (press a key)")} `,
      );
      if (answer.type !== "key" || answer.key.toLowerCase() !== "y") return goOn;
      const still = await mcp.review();
      if (still.length < held)
        out.write(style.dim("The tools you trusted are pinned; the model is offered them from the next task.\n"));
    } catch (error) {
      out.write(style.red(`/mcp: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};

function describeServer(server: McpServerStatus, style: Style): string {
  const { info } = server;
  const said = `${info.name === "" ? "(unnamed)" : visibleLine(info.name)} ${visibleLine(info.version)}`;
  const signIn =
    server.signIn === "signed in"
      ? style.green("signed in")
      : server.signIn === "not signed in"
        ? style.yellow("not signed in")
        : style.dim(server.signIn);
  const tools = `${server.tools} ${server.tools === 1 ? "tool" : "tools"}`;
  const lines = [
    `${style.bold(visibleLine(server.name))} ${style.dim(visibleLine(server.where))}`,
    `  ${said} · protocol ${visibleLine(info.protocolVersion)} · ${signIn} · ${tools}`,
    ...server.held.map(
      (name) => `  ${style.yellow(`held: ${visibleLine(name)} (changed since you trusted it; not offered)`)}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}
