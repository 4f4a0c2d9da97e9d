/** A JSON error answer: `{ "error": message }` with `status`. Messages say what was wrong and what to send instead. */
export function errorResponse(status: number, message: string): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}
