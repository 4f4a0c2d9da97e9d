import { describeContent } from "./content-parts.ts";
import { withoutUrlCredentials } from "./errors.ts";
import type { Message } from "./session.ts";

/** Receives one line per message entering the session. */
export type LogLine = (line: string) => void;

/** `true` logs to stderr; a function receives the lines; `false`/absent is silent. */
export type LoggerOption = boolean | LogLine;

export function resolveLogger(option: LoggerOption | undefined): LogLine | undefined {
  if (option === true) return (line) => console.error(line);
  return typeof option === "function" ? option : undefined;
}

/** One line per message: `[agent] tool_call add {"a":1,"b":2}`, cut to `width` characters. */
export function formatLogLine(message: Message, agentName = "agent", width = 200): string {
  let text: string;
  if ("role" in message) {
    text = `${message.role}: ${describeContent(message.content)}`;
    if (message.role === "assistant" && message.stopReason === "aborted") text = "assistant: (aborted)";
  } else if (message.type === "thinking") text = `thinking: ${message.content}`;
  else if (message.type === "tool_call") text = `tool_call ${message.name} ${JSON.stringify(message.input)}`;
  else {
    const output = typeof message.output === "string" ? message.output : JSON.stringify(message.output);
    text = `tool_result${message.isError === true ? " (error)" : ""} ${message.id}: ${output}`;
  }
  const line = `[${agentName}] ${withoutUrlCredentials(text).replace(/\s+/g, " ")}`;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
