// The MQTT packet guard reads fixed headers from a byte stream however it is cut into reads, and
// the broker's delivery check over its held rights, on its own.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mayDeliver, type Rights } from '../../src/vtn/mqttAccess.ts';
import { addressOf, PacketGuard } from '../../src/vtn/mqttLimits.ts';
import { remainingLength } from '../support/mqtt.ts';

function packet(type: number, length: number): Buffer {
  return Buffer.concat([Buffer.from([type << 4]), remainingLength(length), Buffer.alloc(length, 0x61)]);
}

/** Feeds the bytes in the given cuts; returns the first refusal. */
function scan(guard: PacketGuard, bytes: Buffer, cuts: number[]): string | undefined {
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    const reason = guard.scan(bytes.subarray(at, cut));
    if (reason !== undefined) return reason;
    at = cut;
  }
  return undefined;
}

describe('PacketGuard', () => {
  it('passes packets within the limits however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(8, 10, 12, 14), fc.nat(300)), { maxLength: 8 }), fc.array(fc.nat(4000)), (rest, cuts) => {
        const guard = new PacketGuard(200, 300);
        guard.authenticated = true;
        const bytes = Buffer.concat([packet(1, 150), ...rest.map(([type, length]) => packet(type, length))]);
        expect(scan(guard, bytes, cuts)).toBeUndefined();
      }),
    );
  });

  it('refuses a CONNECT above its limit on the first length byte that says so, and anything first but a CONNECT', () => {
    const guard = new PacketGuard(4096, 65_536);
    // The largest length MQTT can say: refused on its first byte (0xff: already 127, then more).
    expect(guard.scan(Buffer.from([0x10, 0xff]))).toBeUndefined();
    expect(guard.scan(Buffer.from([0xff]))).toMatch(/more than 4096/);
    expect(new PacketGuard(4096, 65_536).scan(packet(8, 10))).toBe('the first packet is not a CONNECT');
    expect(new PacketGuard(4096, 65_536).scan(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80]))).toMatch(/more than|malformed/);
  });

  it('holds packets after the CONNECT to the CONNECT limit until authenticated, then to the packet limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.array(fc.nat(1200)), (length, cuts) => {
        const before = new PacketGuard(500, 800);
        const refusedBefore = scan(before, Buffer.concat([packet(1, 100), packet(8, length)]), cuts) !== undefined;
        expect(refusedBefore).toBe(length > 500);
        const after = new PacketGuard(500, 800);
        expect(after.scan(packet(1, 100))).toBeUndefined();
        after.authenticated = true;
        expect(scan(after, packet(8, length), cuts) !== undefined).toBe(length > 800);
      }),
    );
  });
});

describe('mayDeliver', () => {
  const ven = (vens: Record<string, string[]>): Rights => {
    const map = new Map(Object.entries(vens).map(([id, keys]) => [id, new Set(keys)] as const));
    return { key: 'ven:1:c1', caller: { organizationId: 1, clientId: 'c1', ven: true }, reach: { vens: map, keys: new Set(Object.values(vens).flat()) }, venIds: new Set(map.keys()) };
  };
  const bl: Rights = { key: 'bl:1:b', caller: { organizationId: 1, clientId: 'b', ven: false }, reach: { vens: new Map(), keys: new Set() }, venIds: new Set() };
  const event = (targets: string[] | null, operation = 'CREATE') => ({ objectType: 'EVENT', operation, object: { targets } });
  const owned = (objectType: string, operation: string, clientID: string) => ({ objectType, operation, object: { clientID } });

  it('gives a business-logic client its organization only', () => {
    expect(mayDeliver(bl, 'openadr3/1/events/create', event(null))).toBe(true);
    expect(mayDeliver(bl, 'openadr3/1/subscriptions/create', undefined)).toBe(true);
    expect(mayDeliver(bl, 'openadr3/10/events/create', event(null))).toBe(false);
    expect(mayDeliver(bl, 'openadr3/2/events/create', event(null))).toBe(false);
    expect(mayDeliver(bl, '$SYS/x/new/clients', undefined)).toBe(false);
  });

  it('gives a VEN client what reaches a VEN bound to it, under that VEN’s topics', () => {
    const r = ven({ a: ['GROUP\u001fnorth'], b: [] });
    expect(mayDeliver(r, 'openadr3/1/vens/a/events/create', event(null))).toBe(true);
    expect(mayDeliver(r, 'openadr3/1/vens/a/events/create', event(['GROUP:north', 'GROUP:south']))).toBe(true);
    expect(mayDeliver(r, 'openadr3/1/vens/b/events/create', event(['GROUP:north']))).toBe(false);
    expect(mayDeliver(r, 'openadr3/1/vens/c/events/create', event(null))).toBe(false);
    expect(mayDeliver(r, 'openadr3/1/events/create', event(null))).toBe(false);
    // A payload that is no notification reaches no VEN client.
    expect(mayDeliver(r, 'openadr3/1/vens/a/events/create', undefined)).toBe(false);
    expect(mayDeliver(r, 'openadr3/2/vens/a/events/create', event(null))).toBe(false);
  });

  it('gives a VEN client its own VENs and resources, and the deletion of a VEN it held', () => {
    const r = ven({ a: [] });
    expect(mayDeliver(r, 'openadr3/1/vens/a/update', owned('VEN', 'UPDATE', 'c1'))).toBe(true);
    expect(mayDeliver(r, 'openadr3/1/vens/gone/delete', owned('VEN', 'DELETE', 'c1'))).toBe(true);
    expect(mayDeliver(r, 'openadr3/1/vens/gone/delete', owned('VEN', 'DELETE', 'c2'))).toBe(false);
    expect(mayDeliver(r, 'openadr3/1/vens/gone/update', owned('VEN', 'UPDATE', 'c1'))).toBe(false);
    expect(mayDeliver(r, 'openadr3/1/vens/a/resources/create', owned('RESOURCE', 'CREATE', 'c1'))).toBe(true);
    expect(mayDeliver(r, 'openadr3/1/vens/other/resources/create', owned('RESOURCE', 'CREATE', 'c1'))).toBe(false);
  });
});

describe('addressOf', () => {
  it('counts IPv4 as it is, IPv6 by its /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressOf({ remoteAddress: '192.0.2.7' })).toBe('192.0.2.7');
    expect(addressOf({ remoteAddress: '::ffff:192.0.2.7' })).toBe('192.0.2.7');
    expect(addressOf({ remoteAddress: '2001:db8:1:2:aaaa::1' })).toBe(addressOf({ remoteAddress: '2001:db8:1:2:bbbb::9' }));
    expect(addressOf({ remoteAddress: '2001:db8:1:2::1' })).not.toBe(addressOf({ remoteAddress: '2001:db8:1:3::1' }));
    expect(addressOf({})).toBe('unknown');
  });
});
