import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { errorResponse } from "./error-response.ts";
import { concatenate } from "./send-buffer.ts";

/** The largest request body the handlers read, unless told otherwise: 1 MiB. */
export const defaultMaxBodyBytes = 1024 * 1024;

/**
 * The request's body as JSON, or the 4xx answer to send instead: 415 unless its content type is
 * JSON (`application/json` or `…+json`: a type a cross-site form or a "simple" cross-origin
 * request cannot send without the browser asking the server first), 413 past `maxBytes` (counted
 * as the bytes arrive, so a huge body is never held whole, whatever its `content-length`
 * claims), 400 for a body that is not JSON or nests more than `maxJsonDepth` levels deep.
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
): Promise<{ value: unknown } | { response: Response }> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!/^application\/(?:[\w.-]+\+)?json$/.test(type))
    return {
      response: errorResponse(
        415,
        `send the body as JSON with content-type application/json, not ${JSON.stringify(type.slice(0, 60) || "none")}`,
      ),
    };
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return { response: tooLarge(maxBytes) };
  if (request.body === null) return { response: errorResponse(400, "the request has no body: send JSON") };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { response: tooLarge(maxBytes) };
    }
    chunks.push(value);
  }
  const bytes = concatenate(chunks, size);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { response: errorResponse(400, "the request body is not valid JSON") };
  }
  // What a handler reads goes into a session or to a server: nested past what JSON can be
  // written back, it would fail there as a bare RangeError.
  if (jsonNestedDeeperThan(text))
    return { response: errorResponse(400, `the request body nests more than ${maxJsonDepth} levels deep`) };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { response: errorResponse(400, "the request body is not valid JSON") };
  }
}

function tooLarge(maxBytes: number): Response {
  return errorResponse(413, `the request body is larger than ${maxBytes} bytes`);
}
