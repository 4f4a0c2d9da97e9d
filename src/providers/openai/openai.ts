// simple-agent-loop/openai: OpenAI's two APIs. `openaiChat` speaks Chat Completions, and so every
// OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, Groq…); `openaiResponses` speaks
// the Responses API, statelessly.
export {
  openaiChat,
  openaiChatErrors,
  streamOpenAIChat,
  toOpenAIChatRequest,
  fromOpenAIChatResponse,
  openaiChatProvider,
} from "./chat.ts";
export type { OpenAIChatOptions } from "./chat.ts";
export type {
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIChatRequestOptions,
  OpenAIChatResponse,
} from "./chat-convert.ts";
export {
  openaiResponses,
  streamResponses,
  toOpenAIResponsesRequest,
  fromOpenAIResponsesResponse,
  reasoningSignature,
  openaiResponsesErrors,
  openaiResponsesProvider,
} from "./responses.ts";
export type {
  OpenAIResponsesOptions,
  OpenAIResponsesRequest,
  OpenAIResponsesRequestOptions,
  OpenAIResponsesResponse,
  OpenAIResponsesInputItem,
  OpenAIResponsesOutputItem,
  OpenAIResponsesTool,
  OpenAIResponsesUsage,
} from "./responses.ts";

// The errors these adapters throw, for users who import only this module.
export { ProviderError, ContextOverflowError, isProviderError, isContextOverflowError } from "../../errors.ts";
