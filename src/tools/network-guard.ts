/**
 * Keeps outbound requests away from the bot's own network. An address counts as public only when
 * ipaddr.js (a maintained list of special ranges) calls it plain `unicast`; addresses that carry an
 * IPv4 address inside (IPv4-mapped, SIIT, well-known NAT64, 6to4) are judged by that IPv4, and
 * tunnel or local-translation forms whose real destination cannot be read off the address
 * (Teredo, local-use NAT64 64:ff9b:1::/48) are never public. A host name is judged by every address
 * it resolves to.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** Resolves a host name to every address it has. */
export type HostResolver = (host: string) => Promise<string[]>;

/** What the guard lets through besides public addresses. */
export interface NetworkGuardOptions {
  /** Allow every address, private ones included (a bot on a trusted internal network). */
  allowPrivateNetwork?: boolean;
  /**
   * Hosts allowed even when private: "api.example.com" (any port), "api.example.com:8443" (that port
   * only), "*.corp.example" (every subdomain), IPs and "[::1]:8080" alike.
   */
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

/** IPv6 ranges whose last 32 bits are the IPv4 address really reached. */
const EMBEDS_IPV4_AT_END = new Set(["ipv4Mapped", "rfc6145"]);
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR("64:ff9b::/96");
/** IANA's global unicast space: anything outside it is not the public internet. */
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

function ipv4FromBytes(bytes: number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes);
}

/** Whether a parsed address is public unicast, embedded IPv4 unwrapped first. */
function isPublic(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === "ipv4") return address.range() === "unicast";
  const v6 = address as ipaddr.IPv6;
  const bytes = v6.toByteArray();
  const range = v6.range();
  if (EMBEDS_IPV4_AT_END.has(range)) return isPublic(ipv4FromBytes(bytes.slice(12)));
  if (v6.match(WELL_KNOWN_NAT64)) return isPublic(ipv4FromBytes(bytes.slice(12)));
  if (range === "6to4") return isPublic(ipv4FromBytes(bytes.slice(2, 6)));
  return range === "unicast" && v6.match(GLOBAL_UNICAST);
}

/** Whether an IP address is not a public internet address; anything that is not an address at all counts as non-public. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").split("%")[0]!;
  if (!isIP(bare)) return true;
  try {
    return !isPublic(ipaddr.parse(bare));
  } catch {
    return true;
  }
}

/** The port a URL really connects to. */
function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Splits an allow-list entry into host pattern and optional port. */
function parseAllowEntry(entry: string): { host: string; port?: number } {
  const text = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : undefined };
  if (isIP(text) === 6) return { host: text };
  const withPort = /^(.*):(\d+)$/.exec(text);
  return withPort ? { host: withPort[1]!, port: Number(withPort[2]) } : { host: text };
}

/** Whether `url`'s host (and port, when the entry names one) is in `allowHosts`. */
export function hostInAllowList(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = portOf(url);
  return allowHosts.some((entry) => {
    const allowed = parseAllowEntry(entry);
    if (allowed.port !== undefined && allowed.port !== port) return false;
    return allowed.host.startsWith("*.") ? host.endsWith(allowed.host.slice(1)) : host === allowed.host;
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
  const trusted = options.allowPrivateNetwork === true || hostInAllowList(url, options.allowHosts ?? []);
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
