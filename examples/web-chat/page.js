// The chat page: follows each run of the session through the server's event stream (EventSource:
// it reconnects on its own after the last event id). A reload reads the session's runs again from
// their first event, so the page shows each event once whatever the moment of the reload.
// Everything shown comes from the model or tools: it is set as text, never as markup.
const transcript = document.getElementById("transcript");
const statusLine = document.getElementById("status");
const errorLine = document.getElementById("error");
const stopButton = document.getElementById("stop");
const viewerLink = document.getElementById("viewer-link");
let sessionId = new URLSearchParams(location.search).get("session");
let currentRun;
let currentText;

document.getElementById("task-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const task = document.getElementById("task").value;
  const answer = await post("/api/sessions", { task });
  if (answer === undefined) return;
  sessionId = answer.sessionId;
  history.replaceState(null, "", `?session=${encodeURIComponent(sessionId)}`);
  transcript.replaceChildren();
  bubble("user", task);
  await showSession(false);
});

stopButton.addEventListener("click", () => currentRun && post(`/api/runs/${currentRun}/stop`, {}));

// The sessions of this browser that wait for a decision (the store lists them by status).
async function showWaiting() {
  const reply = await fetch("/api/sessions?status=paused");
  if (!reply.ok) return;
  const { sessions } = await reply.json();
  const list = document.getElementById("waiting-list");
  list.replaceChildren(
    ...sessions.map(({ sessionId: id, title }) => {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = `?session=${encodeURIComponent(id)}`;
      link.textContent = title ?? id;
      item.append(link);
      return item;
    }),
  );
  document.getElementById("waiting").hidden = sessions.length === 0;
}

async function showSession(fromStart) {
  const reply = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}`);
  const state = await reply.json();
  if (!reply.ok) return showError(state.error);
  if (state.viewerUrl) Object.assign(viewerLink, { href: state.viewerUrl, hidden: false });
  if (fromStart) bubble("user", state.task);
  for (const [index, runId] of state.runs.entries())
    if (fromStart || index === state.runs.length - 1) await follow(runId);
}

// Reads one run to its run-end; resolves then.
function follow(runId) {
  currentRun = runId;
  currentText = undefined;
  for (const button of document.querySelectorAll(".tool button")) button.disabled = true;
  statusLine.textContent = "Running…";
  stopButton.hidden = false;
  return new Promise((resolve) => {
    const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events`);
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      render(event);
      if (event.type === "run-end") {
        source.close();
        stopButton.hidden = true;
        resolve();
      }
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        showError("The connection to the run was lost.");
        resolve();
      }
    };
  });
}

function render(event) {
  switch (event.type) {
    case "text-delta":
      currentText ??= bubble("assistant", "");
      currentText.textContent += event.delta;
      break;
    case "message":
      renderMessage(event.message);
      break;
    case "tool-approval-request":
      approvalButtons(event.id, event.name, event.input);
      break;
    case "retry":
      statusLine.textContent = `Retrying: ${event.error}`;
      break;
    case "run-end":
      renderEnd(event);
      break;
  }
}

function renderMessage(message) {
  if (message.role === "assistant") {
    currentText ??= bubble("assistant", "");
    currentText.textContent = message.content || (message.stopReason === "aborted" ? "(stopped)" : "");
    currentText = undefined;
  } else if (message.type === "tool_call") {
    toolCard(message.id, message.name, message.input);
  } else if (message.type === "tool_result") {
    const card = transcript.querySelector(`.tool[data-call-id="${CSS.escape(message.id)}"]`);
    if (card === null) return;
    const result = card.querySelector(".tool-result");
    result.textContent = typeof message.output === "string" ? message.output : JSON.stringify(message.output);
    result.classList.toggle("failed", message.isError === true);
    card.querySelector(".approval")?.remove();
  }
}

// A streamed turn's calls may start (and ask for approval) before the turn's messages arrive: the
// card is made by whichever comes first.
function toolCard(id, name, input) {
  const found = transcript.querySelector(`.tool[data-call-id="${CSS.escape(id)}"]`);
  if (found !== null) return found;
  const card = document.createElement("div");
  card.className = "tool";
  card.dataset.callId = id;
  const title = document.createElement("div");
  title.className = "tool-call";
  title.textContent = `${name}(${JSON.stringify(input)})`;
  const result = document.createElement("div");
  result.className = "tool-result";
  card.append(title, result);
  transcript.append(card);
  return card;
}

function approvalButtons(callId, name, input) {
  const card = toolCard(callId, name, input);
  if (card.querySelector(".approval") !== null) return;
  const box = document.createElement("div");
  box.className = "approval";
  for (const [label, approved] of [
    ["Approve", true],
    ["Deny", false],
  ]) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = approved ? "approve" : "deny";
    button.textContent = label;
    button.addEventListener("click", async () => {
      for (const other of box.querySelectorAll("button")) other.disabled = true;
      const answer = await post(`/api/sessions/${encodeURIComponent(sessionId)}/approve`, {
        decisions: [{ id: callId, approved }],
      });
      if (answer !== undefined) await follow(answer.runId);
    });
    box.append(button);
  }
  card.append(box);
}

function renderEnd(event) {
  // A run read from the stored log (after a restart) has no approval events: its end lists the calls that wait.
  if (event.outcome === "paused")
    for (const call of event.pending ?? []) approvalButtons(call.id, call.name, call.input);
  const texts = {
    done: "Done.",
    paused: "Waiting for your approval.",
    aborted: "Stopped.",
    stopped: "The model stopped early.",
  };
  statusLine.textContent = texts[event.outcome] ?? "Failed.";
  if (event.outcome === "error" || event.outcome === "max-iterations") showError(event.error ?? event.outcome);
}

function bubble(kind, text) {
  const element = document.createElement("div");
  element.className = `bubble ${kind}`;
  element.textContent = text;
  transcript.append(element);
  return element;
}

function showError(text) {
  errorLine.textContent = `Error: ${text}`;
  errorLine.hidden = false;
}

// Posts JSON; shows the server's error and answers undefined when it refuses.
async function post(path, body) {
  try {
    const reply = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await reply.json();
    if (reply.ok) return answer;
    showError(answer.error ?? `the server answered ${reply.status}`);
  } catch (error) {
    showError(String(error));
  }
  return undefined;
}

if (sessionId !== null) void showSession(true);
void showWaiting();
