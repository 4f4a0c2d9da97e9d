import { isIP } from "node:net";

/**
 * What kind of network an IP address belongs to: `public` for an address on the internet, else the
 * range that keeps a request made on someone else's behalf from reaching it (`loopback`,
 * `private` (RFC 1918, carrier-grade NAT, benchmarking), `link-local` (the cloud metadata service
 * at 169.254.169.254), `unique-local` (fc00::/7), `unspecified` (0.0.0.0, ::), `multicast`,
 * `reserved` (documentation, 240.0.0.0/4, broadcast, IPv6 outside 2000::/3)). An IPv6 address that
 * carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d` in either notation, IPv4-compatible, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) is the kind of the IPv4 address it carries. Anything that is not
 * an IP address is `invalid`.
 */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unique-local"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "invalid";

/** The kind of `address` (an IPv4 or IPv6 address, brackets and a zone index allowed). */
export function addressKind(address: string): AddressKind {
  const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const version = isIP(bare);
  if (version === 4) return ipv4Kind(ipv4Bytes(bare));
  if (version === 6) return ipv6Kind(ipv6Groups(bare));
  return "invalid";
}

/** `address` with its kind, as an error tells it: "127.0.0.1, a loopback address". */
export function describeAddress(address: string, kind: AddressKind = addressKind(address)): string {
  const article = kind === "unspecified" || kind === "unique-local" ? "an" : "a";
  return `${address}, ${kind === "invalid" ? "not an IP address" : `${article} ${kind} address`}`;
}

function ipv4Bytes(address: string): number[] {
  return address.split(".").map(Number);
}

function ipv4Kind([a = 0, b = 0, c = 0]: number[]): AddressKind {
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  // Carrier-grade NAT (100.64.0.0/10) and benchmarking (198.18.0.0/15) are inside someone's network.
  if ((a === 100 && b >= 64 && b <= 127) || (a === 198 && (b === 18 || b === 19))) return "private";
  if (a === 169 && b === 254) return "link-local";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved";
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "reserved";
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "reserved";
  return "public";
}

// Eight 16-bit groups; `::` expanded, a dotted IPv4 tail read as two groups.
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const read = (part: string): number[] => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const start = read(head);
  const end = tail === undefined ? [] : read(tail);
  return [...start, ...new Array<number>(8 - start.length - end.length).fill(0), ...end];
}

function ipv6Kind(groups: number[]): AddressKind {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const carried = (high: number, low: number): number[] => [high >> 8, high & 0xff, low >> 8, low & 0xff];
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0) return g7 === 0 ? "unspecified" : g7 === 1 ? "loopback" : "reserved";
  // IPv4-mapped (::ffff:0:0/96) and the deprecated IPv4-compatible (::/96) carry an IPv4 address.
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return ipv4Kind(carried(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Kind(carried(g6, g7));
  if (g0 === 0x2002) return ipv4Kind(carried(g1, g2));
  if ((g0 & 0xfe00) === 0xfc00) return "unique-local";
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  // Site-local (fec0::/10) is deprecated but still routed inside some networks.
  if ((g0 & 0xffc0) === 0xfec0) return "private";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0xdb8) return "reserved";
  if ((g0 & 0xe000) !== 0x2000) return "reserved";
  return "public";
}
