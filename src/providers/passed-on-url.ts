import { isIP } from "node:net";
import { AgentError } from "../errors.ts";
import { addressKind, describeAddress } from "./network-address.ts";

/**
 * Why the URL of a part must not be passed on to the provider as a URL (the provider, or a
 * self-hosted compatible server given as `baseURL`, fetches it from where it runs, for whoever
 * wrote the part), as an `AgentError` naming the adapter, the URL and the rule; `undefined` when it
 * may. With `allow`, its answer (for the normalized href) decides. Without it, the rule a download
 * starts with, decided from the URL alone (the name is the provider's to resolve, not ours):
 * `https:` only, a host that is not a loopback, private, link-local, unique-local or other
 * non-public address in any notation, and not a name that is local by definition (`localhost`,
 * `*.localhost`, `*.local`, `*.internal`, `*.home.arpa`, a name of one label).
 */
export function passOnRefusal(
  url: string,
  adapter: string,
  allow: ((url: string) => boolean) | undefined,
): AgentError | undefined {
  const refuse = (rule: string): AgentError =>
    new AgentError(`${adapter}: refused to pass on ${JSON.stringify(url.slice(0, 200))} to the provider: ${rule}`, {
      retryable: false,
    });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse("it is not a valid URL");
  }
  if (allow !== undefined) return allow(parsed.href) ? undefined : refuse("downloadParts.allow refused it");
  if (parsed.protocol !== "https:")
    return refuse(
      `only https: URLs are passed on by default, not ${parsed.protocol} (downloadParts.allow may accept one)`,
    );
  // The URL parser has already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) !== 0) {
    const kind = addressKind(host);
    return kind === "public" ? undefined : refuse(`its host is ${describeAddress(host, kind)}; ${publicOnly}`);
  }
  const name = host.toLowerCase().replace(/\.$/, "");
  if (!name.includes(".") || localSuffixes.some((suffix) => name === suffix || name.endsWith(`.${suffix}`)))
    return refuse(`its host ${JSON.stringify(name)} is a local name; ${publicOnly}`);
  return undefined;
}

// Names that only a local network resolves (RFC 6761, 6762, 8375, and the cloud metadata names).
const localSuffixes = ["localhost", "local", "internal", "home.arpa"];

const publicOnly = "URLs are passed on only with a public host unless downloadParts.allow accepts them";
