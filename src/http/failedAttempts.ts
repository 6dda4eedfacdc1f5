// Failed-attempt limits of a login surface (the token endpoints; the MQTT broker's CONNECT uses
// the same keys under its own surface name). Failures are counted per address and per (claimed
// client id, address), never per claimed id alone: whoever knows a client id (it is shown in VTN
// objects, and MQTT clients use it as their user name) could otherwise lock its owner out. So a
// correct secret sent from an address that has not failed is never refused because of failures
// elsewhere; an address that keeps failing is refused, whatever ids it names, before its body is
// read or any secret hashed. docs/security.md ("Failed attempts") lists the keys.
//
// Addresses are counted by what one party controls: an IPv4 address as it is, an IPv6 address by
// its /64 (one customer's network: a host given a /64 picks any of its 2^64 addresses), an
// IPv4-mapped IPv6 address as its IPv4 address.
import ipaddr from 'ipaddr.js';
import { RateLimitedError, retryAfterSeconds, type RateLimitResult, type RateLimitStore } from './rateLimit.ts';
import type { RateLimitWindow } from './types.ts';

export interface FailedAttemptLimits {
  /** Failures of one client id from one address. */
  perPair: readonly RateLimitWindow[];
  /** Failures from one address, whatever the ids. */
  perAddress: readonly RateLimitWindow[];
}

/** Longest client id kept whole in a counter's key (ids are far shorter; longer ones are cut). */
const MAX_KEY_ID = 200;

/** The party an address stands for: IPv4 as is, IPv6 by its /64, IPv4-mapped as IPv4. */
export function addressKey(address: string): string {
  try {
    const parsed = ipaddr.process(address);
    if (parsed.kind() === 'ipv4') return parsed.toString();
    const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  } catch {
    // Not an address (an X-Forwarded-For value behind TRUST_PROXY): counted as given.
    return address.slice(0, 100);
  }
}

export class FailedAttempts {
  constructor(
    private readonly store: RateLimitStore,
    /** `token` for the token endpoints, `mqtt` for the broker: each surface has its counters. */
    private readonly surface: string,
    private readonly limits: FailedAttemptLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Refuses (RateLimitedError, 429) when this address, or this client id from this address, has
   * used up its failed attempts; the id is left out where it is not known yet (before the body). */
  async check(address: string, clientId?: string): Promise<void> {
    const now = this.now();
    const where = addressKey(address);
    const byAddress = await this.store.peek(this.addressCounter(where), this.limits.perAddress, now);
    if (!byAddress.allowed) throw this.refusal('from this address', byAddress, this.limits.perAddress, now);
    if (clientId === undefined) return;
    const byPair = await this.store.peek(this.pairCounter(where, clientId), this.limits.perPair, now);
    if (!byPair.allowed) throw this.refusal('for this client id from this address', byPair, this.limits.perPair, now);
  }

  /** Counts a failed attempt (unknown client id or wrong secret) against the address and the pair. */
  async failed(address: string, clientId: string | undefined): Promise<void> {
    const now = this.now();
    const where = addressKey(address);
    await this.store.consume(this.addressCounter(where), this.limits.perAddress, now);
    if (clientId !== undefined) await this.store.consume(this.pairCounter(where, clientId), this.limits.perPair, now);
  }

  private addressCounter(where: string): string {
    return `${this.surface}-failed:address:${where}`;
  }

  private pairCounter(where: string, clientId: string): string {
    return `${this.surface}-failed:client:${clientId.slice(0, MAX_KEY_ID)}|${where}`;
  }

  private refusal(scope: string, result: RateLimitResult, windows: readonly RateLimitWindow[], now: number): RateLimitedError {
    const retryAfter = retryAfterSeconds(result, now);
    const quota = windows.map((w) => `${w.max} per ${w.seconds === 60 ? 'minute' : `${w.seconds} seconds`}`).join(' and ');
    return new RateLimitedError(`Too many failed attempts ${scope} (${quota}). Retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.\n`, { 'Retry-After': String(retryAfter) });
  }
}
