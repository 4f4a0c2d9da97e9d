// A tool-using agent: a get_weather tool backed by wttr.in. Asked about two cities, the
// model calls the tool twice in one response and the loop runs both calls in parallel.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/weather.ts ["What's the weather in Oslo?"]
import { agentLoop, initSession, response, tool, type InvokeModel, type Session } from "simple-agent-loop";
import { isMain, requireModel } from "./run-example.ts";

export type Fetch = (
  url: string,
  init: { signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

export type WeatherReport = { city: string; temp_c: string; description: string };

type WttrAnswer = { current_condition?: { temp_C?: string; weatherDesc?: { value?: string }[] }[] };

/** The get_weather tool; `fetch` is injectable (tests pass a fake one, so no network). */
export function weatherTool(fetchImpl: Fetch = fetch) {
  return tool({
    name: "get_weather",
    description: "Get the current weather for a city.",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string", description: "City name" } },
      required: ["city"],
    },
    handler: async (input, { signal }): Promise<WeatherReport> => {
      const city = String(input.city);
      const reply = await fetchImpl(`https://wttr.in/${encodeURIComponent(city)}?format=j1`, { signal });
      if (!reply.ok) throw new Error(`wttr.in answered ${reply.status} for ${city}`);
      const current = ((await reply.json()) as WttrAnswer).current_condition?.[0];
      if (current === undefined) throw new Error(`wttr.in has no current weather for ${city}`);
      return { city, temp_c: current.temp_C ?? "?", description: current.weatherDesc?.[0]?.value ?? "?" };
    },
  });
}

export async function weatherAgent(
  invokeModel: InvokeModel,
  options: { fetch?: Fetch; question?: string; signal?: AbortSignal } = {},
): Promise<{ answer: string; session: Session }> {
  const session = initSession(
    "You answer weather questions. Use the get_weather tool.",
    options.question ?? "What's the weather in Tokyo and Paris?",
  );
  await agentLoop(invokeModel, [weatherTool(options.fetch)], session, {
    name: "weather",
    maxIterations: 10,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { answer: response(session)?.content ?? "", session };
}

if (isMain(import.meta.url)) {
  const { invokeModel } = requireModel();
  const { answer } = await weatherAgent(
    invokeModel,
    process.argv[2] === undefined ? {} : { question: process.argv[2] },
  );
  console.log(answer);
}
