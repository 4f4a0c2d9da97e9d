/** AWS access keys. `sessionToken` comes with temporary credentials (STS, SSO, an assumed role). */
export type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

export type SignableRequest = {
  method: string;
  url: string;
  /** Every header here is signed; the returned headers are these plus the signature's own. */
  headers: Record<string, string>;
  /** The exact bytes that will be sent. */
  body: string;
  region: string;
  /** The signing name of the service (`bedrock` for Bedrock Runtime). */
  service: string;
  credentials: AwsCredentials;
  /** The signing time (default now); a signature is valid for about five minutes around it. */
  date?: Date;
};

/**
 * Signs a request with AWS Signature Version 4 (the header form), using Web Crypto only so it
 * runs on any runtime with `crypto.subtle`. Returns the headers to send: the given ones plus
 * `x-amz-date`, `x-amz-security-token` when the credentials have a session token, and
 * `authorization`. The path is percent-encoded a second time, as every service but S3 expects:
 * a model id's `:` is sent as `%3A` and signed as `%253A`.
 */
export async function signRequest(request: SignableRequest): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const amzDate = (request.date ?? new Date())
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = url.host;
  headers["x-amz-date"] = amzDate;
  if (request.credentials.sessionToken !== undefined && request.credentials.sessionToken !== "") {
    headers["x-amz-security-token"] = request.credentials.sessionToken;
  }
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    request.method.toUpperCase(),
    encodeRfc3986(encodeURIComponent(url.pathname || "/").replace(/%2F/g, "/")),
    canonicalQuery(url.searchParams),
    names.map((name) => `${name}:${headers[name]!.trim().replace(/\s+/g, " ")}\n`).join(""),
    signedHeaders,
    await sha256Hex(request.body),
  ].join("\n");
  const scope = `${day}/${request.region}/${request.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, await sha256Hex(canonicalRequest)].join("\n");
  let key: ArrayBuffer | Uint8Array<ArrayBuffer> = encoder.encode(`AWS4${request.credentials.secretAccessKey}`);
  for (const part of [day, request.region, request.service, "aws4_request"]) key = await hmac(key, part);
  const signature = hex(await hmac(key, stringToSign));
  const { host: _host, ...sent } = headers;
  return {
    ...sent,
    authorization: `AWS4-HMAC-SHA256 Credential=${request.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

const encoder = new TextEncoder();

function encodeRfc3986(text: string): string {
  return text.replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(
      ([name, value]) => [encodeRfc3986(encodeURIComponent(name)), encodeRfc3986(encodeURIComponent(value))] as const,
    )
    .sort(([a, aValue], [b, bValue]) => (a < b ? -1 : a > b ? 1 : aValue < bValue ? -1 : aValue > bValue ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

async function hmac(key: ArrayBuffer | Uint8Array<ArrayBuffer>, text: string): Promise<ArrayBuffer> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(text));
}

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
