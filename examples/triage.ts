// Several agents, one conversation: a triage agent hands the customer to billing or refunds;
// refunds can hand back. The session records each handoff, so a saved session resumes with the
// agent that was active. An input guardrail takes card numbers out of every customer message
// before any agent's model sees it.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/triage.ts
import {
  defineAgent,
  handoff,
  response,
  runAgent,
  initSession,
  tool,
  type Guardrail,
  type InvokeModel,
  type Session,
} from "simple-agent-loop";
import { isMain, requireModel } from "./run-example.ts";

export function supportAgents(invokeModel: InvokeModel) {
  const billing = defineAgent({
    name: "billing",
    description: "Invoices, payment methods and charges.",
    systemPrompt: "You are the billing specialist. Answer questions about invoices and charges.",
    invokeModel,
    tools: [
      tool({
        name: "latest_invoice",
        description: "The customer's latest invoice.",
        inputSchema: { type: "object", properties: {} },
        handler: () => ({ number: "INV-1042", amount: "49.00 EUR", status: "paid" }),
      }),
    ],
  });
  const refunds = defineAgent({
    name: "refunds",
    description: "Refund requests.",
    systemPrompt: "You are the refunds specialist. Hand back to triage for anything that is not a refund.",
    invokeModel,
  });
  const triage = defineAgent({
    name: "triage",
    systemPrompt: "You are the front desk. Hand billing questions to billing and refund requests to refunds.",
    invokeModel,
    handoffs: [billing, handoff(refunds, { returnTo: true, history: { lastTurns: 1 } })],
  });
  return { triage, billing, refunds };
}

/** Card numbers (13 to 19 digits, spaces or dashes between groups) become `[card]`, before the model sees them. */
export const noCardNumbers: Guardrail = {
  name: "card-numbers",
  check: ({ text = "" }) => {
    const redacted = text.replace(/\b\d(?:[ -]?\d){12,18}\b/g, "[card]");
    return redacted === text ? { action: "allow" } : { action: "redact", replacement: redacted };
  },
};

export async function triageExample(
  invokeModel: InvokeModel,
  question: string,
): Promise<{ answer: string; session: Session }> {
  const { triage } = supportAgents(invokeModel);
  // Run-level guardrails apply to every agent the run reaches.
  const session = await runAgent(triage, initSession("Customer support.", question), {
    guardrails: { input: [noCardNumbers] },
  });
  return { answer: response(session)?.content ?? "", session };
}

if (isMain(import.meta.url)) {
  const { invokeModel } = requireModel();
  const { answer } = await triageExample(invokeModel, "Was my last invoice paid?");
  console.log(answer);
}
