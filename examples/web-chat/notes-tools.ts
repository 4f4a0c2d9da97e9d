// The chat's tools: notes kept in memory. Writing one needs the user's approval (requireApproval),
// so the page shows Approve and Deny buttons for it.
import { tool, type ToolDefinition } from "simple-agent-loop";

export function notesTools(): ToolDefinition[] {
  const notes: { title: string; text: string }[] = [];
  const listNotes = tool({
    name: "list_notes",
    description: "Lists the saved notes.",
    inputSchema: { type: "object", properties: {} },
    handler: () => (notes.length === 0 ? "No notes yet." : notes),
  });
  const writeNote = tool({
    name: "write_note",
    description: "Saves a note. The user approves each write.",
    inputSchema: {
      type: "object",
      properties: { title: { type: "string" }, text: { type: "string" } },
      required: ["title", "text"],
    },
    requireApproval: true,
    handler: ({ title, text }) => {
      notes.push({ title: String(title), text: String(text) });
      return `Saved "${String(title)}".`;
    },
  });
  return [listNotes, writeNote];
}
