import { describe, expect, it } from "vitest";
import { addressKind, type AddressKind } from "../../src/providers/network-address.ts";

describe("addressKind", () => {
  it("tells each address the kind of network it belongs to, in every IPv4 and IPv6 notation", () => {
    const cases: [string, AddressKind][] = [
      ["8.8.8.8", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "private"],
      ["169.254.169.254", "link-local"],
      ["0.0.0.0", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["192.0.2.1", "reserved"],
      ["2606:4700::1111", "public"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["::", "unspecified"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::FFFF:A9FE:A9FE", "link-local"],
      ["::ffff:8.8.8.8", "public"],
      ["::127.0.0.1", "loopback"],
      ["64:ff9b::10.0.0.1", "private"],
      ["2002:7f00:1::", "loopback"],
      ["fc00::1", "unique-local"],
      ["fd12:3456::1", "unique-local"],
      ["fe80::1%eth0", "link-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "reserved"],
      ["example.com", "invalid"],
      ["2130706433", "invalid"],
    ];
    expect(cases.map(([address]) => [address, addressKind(address)])).toStrictEqual(cases);
  });
});
