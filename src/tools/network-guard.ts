/**
 * Keeps outbound requests away from the bot's own network: loopback, private, link-local,
 * unique-local and other non-public addresses are refused, whether written as a literal
 * IP (any IPv4 or IPv6 spelling, IPv4-mapped IPv6 included) or reached through a host name
 * (every address the name resolves to is checked).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/** Resolves a host name to every address it has. */
export type HostResolver = (host: string) => Promise<string[]>;

/** What the guard lets through besides public addresses. */
export interface NetworkGuardOptions {
  /** Allow every address, private ones included (a bot on a trusted internal network). */
  allowPrivateNetwork?: boolean;
  /** Host names or IPs allowed even when private; "*.corp.example" allows every subdomain. */
  allowHosts?: string[];
  /** How names are resolved; the system resolver by default. */
  resolve?: HostResolver;
}

/** A destination the guard refused; the message says which address and why. */
export class BlockedDestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BlockedDestinationError";
  }
}

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
] as const) NON_PUBLIC.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 96], // unspecified, loopback and IPv4-compatible
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
  ["100::", 64], // discard
] as const) NON_PUBLIC.addSubnet(net, bits, "ipv6");

/** Whether an IP address is not a public internet address (IPv4-mapped and embedded IPv4 judged by their IPv4). */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").split("%")[0];
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, "ipv4");
  if (family !== 6) return true; // not an address at all: never treat as public
  if (NON_PUBLIC.check(bare, "ipv6")) return true;
  const embedded = embeddedIPv4(bare);
  return embedded !== undefined && NON_PUBLIC.check(embedded, "ipv4");
}

/** The IPv4 address inside an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) IPv6 address. */
function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return quad(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return quad(g[6], g[7]);
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (which `isIP` already accepted). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number);
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s ? s.split(":").map((h) => parseInt(h, 16)) : []);
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail];
  return groups.length === 8 && groups.every((x) => Number.isInteger(x)) ? groups : undefined;
}

function hostAllowed(host: string, allowHosts: string[]): boolean {
  return allowHosts.some((pattern) => {
    const p = pattern.toLowerCase().replace(/^\[|\]$/g, "");
    return p.startsWith("*.") ? host.endsWith(p.slice(1)) : host === p;
  });
}

const systemResolver: HostResolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Throws BlockedDestinationError unless `url` may be fetched: http or https, and a host that
 * is allowed or whose every address is public. Returns the addresses that were checked.
 */
export async function checkDestination(url: URL, options: NetworkGuardOptions = {}): Promise<string[]> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BlockedDestinationError(`only http and https URLs can be fetched, not ${url.protocol.replace(":", "")}`);
  }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const trusted = options.allowPrivateNetwork === true || hostAllowed(host, options.allowHosts ?? []);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch {
      throw new BlockedDestinationError(`could not resolve host ${host}`);
    }
    if (addresses.length === 0) throw new BlockedDestinationError(`host ${host} has no addresses`);
  }
  if (trusted) return addresses;
  const blocked = addresses.find(isNonPublicAddress);
  if (blocked !== undefined) {
    const what = blocked === host ? blocked : `${host} (it resolves to ${blocked})`;
    throw new BlockedDestinationError(
      `refused to fetch ${what}: a loopback, private, link-local or otherwise non-public address; only public addresses can be fetched`,
    );
  }
  return addresses;
}
