import { isIPv6 } from "node:net";
import type { ClientAddress } from "../wire/request";

/**
 * The subject per-IP limits count a caller as: its IPv4 address, or the /64 network of its IPv6 address (one
 * subscriber gets a whole /64, so counting each address would give one caller 2^64 fresh limits). An IPv4 address
 * carried in IPv6 (::ffff:a.b.c.d) is the IPv4 address. `client.ip` is the client as TRUST_PROXY lets the proxies name it.
 */
export function clientSubject(client: ClientAddress): string {
  const ip = client.ip ?? "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return `ip:${mapped[1]}`;
  if (!isIPv6(ip)) return `ip:${ip}`;
  return `ip6:${ipv6Prefix64(ip)}::/64`;
}

/** The first four groups of an IPv6 address, written in full (zone index dropped): "2001:db8:0:1". */
export function ipv6Prefix64(ip: string): string {
  const address = ip.split("%")[0].toLowerCase();
  const groupsOf = (part: string) => (part ? part.split(":") : []);
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) counts as two groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  let groups: string[];
  if (address.includes("::")) {
    const [head, tail] = address.split("::");
    const left = groupsOf(head);
    const right = groupsOf(tail);
    groups = [...left, ...new Array<string>(8 - width(left) - width(right)).fill("0"), ...right];
  } else groups = groupsOf(address);
  return groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":");
}
