// The embedded MQTT broker's limits on what a connection may cost before and after it proves
// who it is (docs/security.md, "MQTT broker"):
// - packet sizes, checked on each packet's fixed header as the broker reads the socket: a
//   CONNECT (the only packet allowed first) of at most MQTT_MAX_CONNECT_BYTES, any other packet
//   of at most MQTT_MAX_PACKET_BYTES once the CONNECT is accepted;
// - connections per address (MQTT_MAX_CONNECTIONS_PER_ADDRESS), counted from the TCP accept;
// - failed CONNECTs, counted per (user name, address) and per address, never per claimed name
//   alone, so that nobody's failures lock out a correct token from another address (the token
//   endpoint's counters, src/http/failedAttempts.ts, under the surface name `mqtt`).
import type { Socket } from 'node:net';
import { addressKey, FailedAttempts } from '../http/failedAttempts.ts';
import type { RateLimitStore } from '../http/rateLimit.ts';
import type { RateLimitWindow } from '../http/types.ts';

const CONNECT = 1;

/** Reads MQTT fixed headers from a connection's bytes and says when a packet is too large.
 * mqtt-packet, aedes' parser, keeps a packet's bytes until all the length it announces has come
 * and has no maximum, and aedes builds the parser itself: this sees each header first. Hand
 * written because it runs on every read of every connection: bodies are skipped by arithmetic,
 * nothing is copied. */
export class PacketGuard {
  /** Set once the CONNECT is accepted: later packets get the larger limit. */
  authenticated = false;
  private packets = 0;
  private expectingType = true;
  private lengthBytes = 0;
  private length = 0;
  private multiplier = 1;
  /** Body bytes of the current packet still to pass. */
  private skip = 0;

  constructor(
    private readonly maxConnectBytes: number,
    private readonly maxPacketBytes: number,
  ) {}

  /** Scans the next bytes read; returns why the connection must close, if it must. */
  scan(chunk: Buffer): string | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const byte = chunk[i++]!;
      if (this.expectingType) {
        if (this.packets === 0 && byte >> 4 !== CONNECT) return 'the first packet is not a CONNECT';
        this.expectingType = false;
        this.lengthBytes = 0;
        this.length = 0;
        this.multiplier = 1;
        continue;
      }
      // The remaining length: up to 4 bytes, 7 bits each, least significant first. What is read
      // so far is a lower bound, so a length over the limit is refused from its first byte on.
      this.length += (byte & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthBytes += 1;
      const limit = this.authenticated ? this.maxPacketBytes : this.maxConnectBytes;
      if (this.length > limit) return `a packet of more than ${limit} bytes`;
      if (byte & 0x80) {
        if (this.lengthBytes === 4) return 'a malformed remaining length';
        continue;
      }
      this.packets += 1;
      this.skip = this.length;
      this.expectingType = true;
    }
    return undefined;
  }
}

/** Puts a guard on what aedes reads from a socket (it reads with `socket.read()` on
 * 'readable'): bytes that break a limit are never handed over, and the socket is destroyed. */
export function guardReads(socket: Socket, guard: PacketGuard, refused: (reason: string) => void): void {
  const read = socket.read;
  socket.read = function guardedRead(this: Socket, size?: number) {
    const chunk: unknown = read.call(this, size);
    if (Buffer.isBuffer(chunk) && chunk.length > 0) {
      const reason = guard.scan(chunk);
      if (reason !== undefined) {
        refused(reason);
        this.destroy();
        return null;
      }
    }
    return chunk;
  };
}

/** The party a connection's address stands for, as the token endpoint counts it (IPv4 as it is,
 * IPv6 by its /64, IPv4-mapped as IPv4; src/http/failedAttempts.ts). */
export function addressOf(socket: { remoteAddress?: string | undefined }): string {
  return addressKey(socket.remoteAddress ?? 'unknown');
}

/** Open connections per address. */
export class ConnectionCounter {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Counts a new connection; false (not counted) when its address is at the limit. */
  admit(address: string): boolean {
    const n = this.open.get(address) ?? 0;
    if (n >= this.max) return false;
    this.open.set(address, n + 1);
    return true;
  }

  release(address: string): void {
    const n = (this.open.get(address) ?? 1) - 1;
    if (n <= 0) this.open.delete(address);
    else this.open.set(address, n);
  }
}

/** Failed-CONNECT quotas: the token endpoint's, counted by its FailedAttempts under the surface
 * name `mqtt` (src/http/failedAttempts.ts). */
export interface LoginLimits {
  store: RateLimitStore;
  /** Failed CONNECTs per (user name, address). */
  perClient: readonly RateLimitWindow[];
  /** Failed CONNECTs per address, whatever the user name. */
  perAddress: readonly RateLimitWindow[];
}

/** The failed-CONNECT counters of the broker. */
export function loginFailures(limits: LoginLimits): FailedAttempts {
  return new FailedAttempts(limits.store, 'mqtt', { perPair: limits.perClient, perAddress: limits.perAddress });
}
