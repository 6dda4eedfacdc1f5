// Which IP addresses a webhook may never reach: every range of IANA's IPv4 and IPv6
// Special-Purpose Address Registries, multicast, and (IPv6) anything outside global unicast
// 2000::/3. The table is docs/webhook-addresses.md (with the sources); addresses are parsed and
// matched with ipaddr.js. Addresses that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, the
// NAT64 well-known prefix 64:ff9b::/96, 6to4 2002::/16) are judged by the IPv4 address inside:
// http://[64:ff9b::a9fe:a9fe]/ reaches 169.254.169.254 through a NAT64 gateway. Every range is
// refused, even the few IANA marks globally reachable (anycast relays, AS112): none is a
// webhook receiver, and an allow-list of exceptions would be one more thing to get wrong.
import ipaddr from 'ipaddr.js';

type Range = readonly [cidr: string, name: string];

/** IANA IPv4 Special-Purpose Address Registry (plus multicast, RFC 5771). Smaller ranges inside
 * a listed one (192.0.0.0/29 DS-Lite, 192.0.0.170/31 NAT64 discovery, …) are covered by it. */
export const IPV4_SPECIAL: readonly Range[] = [
  ['0.0.0.0/8', '"this network" (RFC 791)'],
  ['10.0.0.0/8', 'private-use (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space, carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback (RFC 1122)'],
  ['169.254.0.0/16', 'link-local, cloud metadata services (RFC 3927)'],
  ['172.16.0.0/12', 'private-use (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments: DS-Lite, PCP/TURN anycast, NAT64 discovery (RFC 6890)'],
  ['192.0.2.0/24', 'documentation, TEST-NET-1 (RFC 5737)'],
  ['192.31.196.0/24', 'AS112-v4 (RFC 7535)'],
  ['192.52.193.0/24', 'AMT (RFC 7450)'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private-use (RFC 1918)'],
  ['192.175.48.0/24', 'direct delegation AS112 service (RFC 7534)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation, TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'documentation, TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0/4', 'multicast (RFC 5771)'],
  ['240.0.0.0/4', 'reserved (RFC 1112), limited broadcast 255.255.255.255 (RFC 919)'],
];

/** IANA IPv6 Special-Purpose Address Registry, plus multicast and the deprecated ranges. The
 * three prefixes that embed an IPv4 address are handled before this table (see above). */
export const IPV6_SPECIAL: readonly Range[] = [
  ['::/128', 'unspecified (RFC 4291)'],
  ['::1/128', 'loopback (RFC 4291)'],
  ['::/96', 'IPv4-compatible, deprecated (RFC 4291)'],
  ['64:ff9b:1::/48', 'local-use IPv4/IPv6 translation (RFC 8215)'],
  ['100::/64', 'discard-only (RFC 6666)'],
  ['100:0:0:1::/64', 'dummy prefix (RFC 9780)'],
  ['2001::/23', 'IETF protocol assignments: Teredo, benchmarking, AMT, AS112, ORCHID, drone remote ID (RFC 2928)'],
  ['2001:db8::/32', 'documentation (RFC 3849)'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service (RFC 7534)'],
  ['3fff::/20', 'documentation (RFC 9637)'],
  ['5f00::/16', 'segment routing SIDs (RFC 9602)'],
  ['fc00::/7', 'unique-local (RFC 4193)'],
  ['fe80::/10', 'link-local (RFC 4291)'],
  ['fec0::/10', 'site-local, deprecated (RFC 3879)'],
  ['ff00::/8', 'multicast (RFC 4291)'],
];

const parsed = <T extends ipaddr.IPv4 | ipaddr.IPv6>(ranges: readonly Range[]) => ranges.map(([cidr, name]) => ({ range: ipaddr.parseCIDR(cidr) as [T, number], name }));
const V4 = parsed<ipaddr.IPv4>(IPV4_SPECIAL);
const V6 = parsed<ipaddr.IPv6>(IPV6_SPECIAL);
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

function ipv4Range(address: ipaddr.IPv4): string | undefined {
  return V4.find((r) => address.match(r.range))?.name;
}

/** The IPv4 address carried by an IPv4-mapped, NAT64 (well-known prefix) or 6to4 address. */
function embeddedIpv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; via: string } | undefined {
  const bytes = address.toByteArray();
  if (address.match(MAPPED)) return { ipv4: new ipaddr.IPv4(bytes.slice(12)), via: 'IPv4-mapped' };
  if (address.match(NAT64)) return { ipv4: new ipaddr.IPv4(bytes.slice(12)), via: 'NAT64 (64:ff9b::/96)' };
  if (address.match(SIX_TO_FOUR)) return { ipv4: new ipaddr.IPv4(bytes.slice(2, 6)), via: '6to4 (2002::/16)' };
  return undefined;
}

/** The special-purpose range an IP address falls in, or undefined for a public unicast address.
 * Text that is not an IP address (a host name) is undefined too; see isInternalAddress. */
export function specialPurposeRange(text: string): string | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return ipv4Range(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded) {
    const inner = ipv4Range(embedded.ipv4);
    return inner ? `${embedded.via} ${embedded.ipv4.toString()}: ${inner}` : undefined;
  }
  const special = V6.find((r) => v6.match(r.range))?.name;
  if (special) return special;
  return v6.match(GLOBAL_UNICAST) ? undefined : 'outside global unicast 2000::/3 (reserved by the IETF)';
}
