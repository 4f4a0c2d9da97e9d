import type { Guardrails } from "simple-agent-loop";

/**
 * A toolOutput guardrail `secrets` that lets through any output without the password `hunter2`
 * and blocks ("holds a password") or redacts (the password as `[secret]`) one with it.
 */
export function passwordGuardrails(action: "block" | "redact"): Guardrails {
  return {
    toolOutput: [
      {
        name: "secrets",
        check: ({ text = "" }) =>
          !text.includes("hunter2")
            ? { action: "allow" }
            : action === "block"
              ? { action: "block", message: "holds a password" }
              : { action: "redact", replacement: text.replace("hunter2", "[secret]") },
      },
    ],
  };
}
