import { isIP } from "node:net";

/**
 * One entry of `--allow-host`: a host name (`registry.npmjs.org`), every name under a domain
 * (`*.github.com`, not `github.com` itself), or an IP address (`10.0.0.5`, `[::1]`); with `:port`,
 * that port only, otherwise any port. Names are kept as a URL would write them (lower case,
 * punycode, no trailing dot), IP addresses in their canonical form.
 */
export type AllowedHost = { host: string; subdomains: boolean; port: number | undefined };

/**
 * Reads one `--allow-host` value (see `AllowedHost`). Throws a `TypeError` that says what is wrong
 * for anything else (a URL, a path, a user name, a port out of range).
 */
export function parseAllowedHost(text: string): AllowedHost {
  const trimmed = text.trim();
  const subdomains = trimmed.startsWith("*.");
  const rest = subdomains ? trimmed.slice(2) : trimmed;
  const authority = hostAuthority(rest);
  if (authority === undefined || (subdomains && isIP(authority.host) !== 0))
    throw new TypeError(
      `--allow-host takes a host name, *.domain or an IP address, with an optional :port (e.g. registry.npmjs.org, *.github.com, 10.0.0.5:8080); got ${JSON.stringify(text)}`,
    );
  return { host: authority.host, subdomains, port: authority.port };
}

/**
 * The host and port a proxy request names (`host:port` of a CONNECT, the host of an absolute
 * URL), canonical as `parseAllowedHost` keeps them; `undefined` when it is not one host (a user
 * name, a path). IP addresses written oddly (`2130706433`, `0x7f.1`) become the address they mean.
 */
export function hostAuthority(text: string): { host: string; port: number | undefined } | undefined {
  if (text === "" || /[\s/?#@\\]/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/\.$/, "").replace(/^\[(.*)\]$/, "$1");
  if (url.username !== "" || url.password !== "") return undefined;
  if (isIP(host) === 0 && !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) return undefined;
  // URL drops port 80 as http's default; whether one was written decides "that port only".
  const written = /:(\d{1,5})$/.exec(text)?.[1];
  const port = written === undefined ? undefined : Number(written);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  return { host, port };
}

/** Whether `allowed` lets a connection to `host` (canonical, see `hostAuthority`) on `port` through. */
export function isHostAllowed(allowed: readonly AllowedHost[], host: string, port: number): boolean {
  return allowed.some(
    (entry) =>
      (entry.port === undefined || entry.port === port) &&
      (entry.subdomains ? host.endsWith(`.${entry.host}`) : host === entry.host),
  );
}

/** How an entry is written back (for messages and the tool's description). */
export function describeAllowedHost(entry: AllowedHost): string {
  const host = isIP(entry.host) === 6 ? `[${entry.host}]` : entry.host;
  return `${entry.subdomains ? "*." : ""}${host}${entry.port === undefined ? "" : `:${entry.port}`}`;
}
