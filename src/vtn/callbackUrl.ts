// Callback URLs are chosen by clients and called by the server, which makes them a way to make
// the server reach into its own network (SSRF). They must be http or https, carry no
// credentials (the bearerToken is for that), and, unless VTN_WEBHOOK_ALLOW_PRIVATE is set, must
// not name a loopback, private, link-local or otherwise internal address. The address check is
// made twice: on the URL when the subscription is written (IP literals, localhost), and on every
// address the host name resolves to when a notification is sent (webhookClient.ts), so a name
// re-pointed at an internal address later is refused too.
import net from 'node:net';

const INTERNAL = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/** Loopback, private, link-local, multicast, reserved. IPv4-mapped IPv6 addresses
 * (::ffff:127.0.0.1) are checked as the IPv4 address they carry. */
export function isInternalAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Why a callback URL is refused, or undefined when it is acceptable. */
export function callbackUrlProblem(raw: string, allowInternal: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials (use bearerToken)';
  if (allowInternal) return undefined;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isLocalName(host) || isInternalAddress(host)) return 'must not point at a loopback, private or link-local address';
  return undefined;
}
