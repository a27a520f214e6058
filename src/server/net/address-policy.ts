/** Which addresses and URLs a server-side fetch of a user-supplied URL may reach (the SSRF policy). */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Only the web: file:, data:, ftp: and friends never leave this function. */
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * Whether an IP address (any spelling ipaddr.js parses) is a public unicast address.
 * ipaddr.js classifies loopback, private, link-local (cloud metadata), CGNAT, multicast,
 * unspecified, broadcast, reserved, 6to4, Teredo, NAT64 and unique-local as not 'unicast'.
 */
export function isPublicAddress(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return false;
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isPublicAddress(v6.toIPv4Address().toString());
    // ::a.b.c.d (deprecated IPv4-compatible form) is 'unicast' to ipaddr.js but embeds any IPv4 address.
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return ip.range() === 'unicast';
}

/** Whether a URL hostname is an IP literal (WHATWG URL has already turned 0x7f000001, 2130706433 and 0177.0.0.1 into 127.0.0.1). */
function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(bare) ? bare : undefined;
}

/**
 * Why a URL may not be fetched, or undefined when it may. With `allowPrivate` (tests only) the
 * address rule is lifted, never the scheme rule.
 */
export function checkUrlPolicy(url: URL, options: { allowPrivate: boolean }): string | undefined {
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return `Only http and https URLs can be fetched (got ${url.protocol.replace(/:$/, '')})`;
  if (url.username || url.password) return 'URLs with credentials are not fetched';
  if (!url.hostname) return 'The URL has no host';
  if (options.allowPrivate) return undefined;
  const literal = ipLiteralOf(url.hostname);
  if (literal !== undefined) return isPublicAddress(literal) ? undefined : `${url.hostname} is not a public address`;
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  // Names that never resolve to the public internet; refused before any DNS query.
  if (!host.includes('.') || /\.(localhost|local|internal|home\.arpa|lan)$/.test(host)) return `${url.hostname} is not a public host name`;
  return undefined;
}

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(hostname: string, address: string) {
    super(`${hostname} resolves to ${address}, which is not a public address`);
    this.name = 'BlockedAddressError';
  }
}

/**
 * A `connect.lookup` for the HTTP agent: resolves the name itself and refuses the connection when
 * any answer is private, so the address checked is the address dialled (no DNS-rebinding gap).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '', 4);
      return;
    }
    const list = addresses as dns.LookupAddress[];
    const blocked = list.find((entry) => !isPublicAddress(entry.address));
    if (blocked) {
      callback(new BlockedAddressError(hostname, blocked.address), '', 4);
      return;
    }
    if (list.length === 0) {
      callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      return;
    }
    if (options.all) (callback as unknown as (err: null, addresses: dns.LookupAddress[]) => void)(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  });
};
