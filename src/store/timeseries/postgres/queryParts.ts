// Splitting one large reading query into parts that PostgreSQL runs at once on separate
// connections. One query runs on one backend process, and most of its time is per-row work
// (aggregation; until the third session also the JSON) that a second core would halve:
// `npm run bench:query` measured 100 registers × a month of hourly averages at 740 ms as one
// query and 470 ms as two halves, 100 register-years of local days at 2,645 ms and 1,238 ms
// (docs/benchmarks-meter.md). Parts come back as columns and are joined here before the JSON.
//
// Several registers are split into groups of registers; one register into consecutive time
// ranges whose boundaries fall on bucket boundaries (so no bucket is cut in two; for local days
// the day query itself moves the cuts to local midnights). Each part reads
// its own snapshot: a batch committed while the parts run may be visible in some parts only,
// as if the registers (or periods) had been read one after the other.
import type { Series } from '../types.ts';

/** A part: registers [from, to) of the query's list, times [start, end). */
export interface QueryPart {
  from: number;
  to: number;
  start: number;
  end: number;
}

/** Below this much data per part (registers × days) one query is as fast. */
const MIN_REGISTER_DAYS_PER_PART = 30;

/**
 * @param alignMs time boundaries are multiples of this from the epoch; undefined = never split
 *   by time (local-day buckets of several registers, whose boundaries differ per register).
 */
export function splitQuery(registers: number, start: number, end: number, parts: number, alignMs: number | undefined): QueryPart[] {
  const whole = [{ from: 0, to: registers, start, end }];
  const registerDays = (registers * (end - start)) / 86_400_000;
  const n = Math.min(parts, Math.floor(registerDays / MIN_REGISTER_DAYS_PER_PART));
  if (n < 2) return whole;
  if (registers >= 2) {
    const groups = Math.min(n, registers);
    return Array.from({ length: groups }, (_, k) => ({ from: Math.floor((k * registers) / groups), to: Math.floor(((k + 1) * registers) / groups), start, end }));
  }
  if (alignMs === undefined) return whole;
  const bounds = [start];
  for (let k = 1; k < n; k += 1) {
    const b = Math.floor((start + ((end - start) * k) / n) / alignMs) * alignMs;
    if (b > bounds[bounds.length - 1]! && b < end) bounds.push(b);
  }
  bounds.push(end);
  return bounds.slice(1).map((b, k) => ({ from: 0, to: registers, start: bounds[k]!, end: b }));
}

function concat<T extends Float64Array | Int32Array>(arrays: readonly T[], make: (n: number) => T): T {
  const out = make(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

/** Each register's series of consecutive parts joined, in part order. */
export function joinParts(parts: readonly (readonly Series[])[]): Series[] {
  if (parts.length === 1) return [...parts[0]!];
  const byId = new Map<number, Series[]>();
  for (const part of parts) for (const s of part) byId.set(s.registerId, [...(byId.get(s.registerId) ?? []), s]);
  return [...byId].map(([registerId, list]) => ({
    registerId,
    timestamps: concat(list.map((s) => s.timestamps), (n) => new Float64Array(n)),
    values: concat(list.map((s) => s.values), (n) => new Float64Array(n)),
    resolutions: concat(list.map((s) => s.resolutions), (n) => new Int32Array(n)),
    updatedAt: concat(list.map((s) => s.updatedAt), (n) => new Float64Array(n)),
  }));
}
