// The webhook address table (src/vtn/specialAddresses.ts, docs/webhook-addresses.md) against a
// second source: every special range ipaddr.js knows is refused by ours, at its first and last
// address; and docs/webhook-addresses.md lists every range of the table.
import fs from 'node:fs';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { IPV4_SPECIAL, IPV6_SPECIAL, specialPurposeRange } from '../../src/vtn/specialAddresses.ts';

function lastAddress([network, bits]: [ipaddr.IPv4 | ipaddr.IPv6, number]): string {
  const bytes = network.toByteArray();
  for (let i = 0; i < bytes.length; i += 1) {
    const hostBits = Math.max(0, Math.min(8, (i + 1) * 8 - bits));
    bytes[i] = bytes[i]! | ((1 << hostBits) - 1);
  }
  return ipaddr.fromByteArray(bytes).toString();
}

describe('special-purpose addresses', () => {
  it('refuses every range ipaddr.js classifies as special, at both ends', () => {
    for (const kind of [ipaddr.IPv4, ipaddr.IPv6]) {
      for (const [name, ranges] of Object.entries((kind.prototype as unknown as { SpecialRanges: Record<string, unknown> }).SpecialRanges)) {
        const list = (Array.isArray((ranges as unknown[])[0]) ? ranges : [ranges]) as [ipaddr.IPv4 | ipaddr.IPv6, number][];
        for (const range of list) {
          for (const address of [range[0].toString(), lastAddress(range)]) {
            // IPv4-mapped, NAT64 and 6to4 are judged by the IPv4 inside: at their ends that is 0.0.0.0
            // or 255.255.255.255, both special.
            expect(specialPurposeRange(address), `${name} ${address}`).toBeDefined();
          }
        }
      }
    }
  });

  it('takes everything outside global unicast 2000::/3 as special', () => {
    for (const address of ['400::1', '8000::1', 'e000::1', 'fe00::1', '1::1']) expect(specialPurposeRange(address), address).toBeDefined();
    for (const address of ['2a00:1450:4001::1', '2606:4700::1111', '1.1.1.1', '93.184.215.14']) expect(specialPurposeRange(address), address).toBeUndefined();
  });

  it('is documented range by range', () => {
    const doc = fs.readFileSync('docs/webhook-addresses.md', 'utf8');
    for (const [cidr] of [...IPV4_SPECIAL, ...IPV6_SPECIAL]) expect(doc, cidr).toContain(`\`${cidr}\``);
  });
});
