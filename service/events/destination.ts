import dns from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * Where webhooks may go. A URL the service would POST to on a tenant's behalf must not reach the service's own network:
 * its addresses are checked when the endpoint is created and again at every delivery, on the addresses the connection
 * then uses (the lookup below hands the checked address to the socket, so a name that resolves elsewhere a second
 * time, DNS rebinding, is caught).
 */

export type AddressClass = "public" | "loopback" | "private" | "link-local" | "metadata" | "reserved";

export interface DestinationPolicy {
  /** Production: https only. */
  httpsOnly: boolean;
  /** Loopback and private ranges allowed (the sandbox's local receivers). Link-local, metadata and reserved: never. */
  allowPrivate: boolean;
}

function blockList(entries: [string, number, "ipv4" | "ipv6"][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of entries) list.addSubnet(net, prefix, type);
  return list;
}

const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);
const LOOPBACK = blockList([
  ["127.0.0.0", 8, "ipv4"],
  ["::1", 128, "ipv6"],
]);
const PRIVATE = blockList([
  ["10.0.0.0", 8, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["100.64.0.0", 10, "ipv4"], // carrier-grade NAT
  ["fc00::", 7, "ipv6"], // unique local
]);
const LINK_LOCAL = blockList([
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
]);
const RESERVED = blockList([
  ["0.0.0.0", 8, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.0.2.0", 24, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["198.51.100.0", 24, "ipv4"],
  ["203.0.113.0", 24, "ipv4"],
  ["224.0.0.0", 4, "ipv4"], // multicast
  ["240.0.0.0", 4, "ipv4"], // reserved and broadcast
  ["::", 128, "ipv6"],
  ["100::", 64, "ipv6"], // discard
  ["2001:db8::", 32, "ipv6"], // documentation
  ["ff00::", 8, "ipv6"], // multicast
]);

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, or NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

export function classifyAddress(ip: string): AddressClass {
  const version = isIP(ip);
  if (version === 0) return "reserved";
  if (version === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4) return classifyAddress(v4);
  }
  const type = version === 4 ? "ipv4" : "ipv6";
  if (METADATA.has(ip.toLowerCase())) return "metadata";
  if (LOOPBACK.check(ip, type)) return "loopback";
  if (LINK_LOCAL.check(ip, type)) return "link-local";
  if (PRIVATE.check(ip, type)) return "private";
  if (RESERVED.check(ip, type)) return "reserved";
  return "public";
}

/** Why `ip` may not receive webhooks under `policy`, or undefined when it may. */
export function refusalOf(ip: string, policy: DestinationPolicy): string | undefined {
  const kind = classifyAddress(ip);
  if (kind === "public") return undefined;
  if ((kind === "loopback" || kind === "private") && policy.allowPrivate) return undefined;
  return `${ip} is a ${kind} address`;
}

export class DestinationRefused extends Error {}

/** The URL checked for its form (scheme, no credentials); its host's addresses are checked by checkDestination. */
export function parseWebhookUrl(text: string, policy: DestinationPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DestinationRefused("must be an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new DestinationRefused("must be an https URL");
  if (url.protocol === "http:" && policy.httpsOnly)
    throw new DestinationRefused("must be an https URL (http is accepted in the local sandbox only)");
  if (url.username || url.password)
    throw new DestinationRefused(
      "must not carry credentials (user:password@): authenticate the webhook by its signature",
    );
  if (url.hash) throw new DestinationRefused("must not have a #fragment");
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** Every address the URL's host resolves to, each allowed by `policy`; throws DestinationRefused naming the first that is not. */
export async function checkDestination(url: URL, policy: DestinationPolicy): Promise<string[]> {
  const host = hostOf(url);
  const addresses = isIP(host) ? [host] : await resolveAll(host);
  for (const address of addresses) {
    const refusal = refusalOf(address, policy);
    if (refusal)
      throw new DestinationRefused(
        `${host} resolves to ${refusal}, where webhooks may not go${policy.allowPrivate ? "" : " (public addresses only)"}`,
      );
  }
  return addresses;
}

async function resolveAll(host: string): Promise<string[]> {
  try {
    const found = await dns.promises.lookup(host, { all: true, verbatim: true });
    if (!found.length) throw new Error("no address");
    return found.map((a) => a.address);
  } catch {
    throw new DestinationRefused(`${host} does not resolve`);
  }
}

/**
 * A socket lookup for http(s).request that resolves the host, refuses it unless every address is allowed, and hands
 * the socket the addresses it checked (an IP literal never reaches a lookup: check it with checkDestination first).
 */
export function checkedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true, family: options.family }, (error, found) => {
      if (error) return callback(error, "", 4);
      const addresses = found;
      const refused = addresses.map((a) => refusalOf(a.address, policy)).find(Boolean);
      if (!addresses.length || refused) {
        const reason = new DestinationRefused(
          refused ? `${hostname} resolves to ${refused}, where webhooks may not go` : `${hostname} does not resolve`,
        );
        return callback(reason, "", 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
