// Splitting one large read of register-day blocks into parts that PostgreSQL serves at once on
// separate connections (blockRead.ts): reading and hex-encoding tens of MB of blocks is per-row
// work of one backend process that a second core halves (the row store measured 740 ms as one
// query and 470 ms as two halves for 100 registers × a month, docs/benchmarks.md).
//
// Several registers are split into groups of registers; one register into consecutive time
// ranges whose boundaries fall on UTC days (alignMs), so every block is in exactly one part.
// Each part reads its own snapshot: a batch committed while the parts run may be visible in
// some parts only, as if the registers (or periods) had been read one after the other.

/** A part: registers [from, to) of the query's list, times [start, end). */
export interface QueryPart {
  from: number;
  to: number;
  start: number;
  end: number;
}

/** Below this much data per part (registers × days) one query is as fast: for reads of the
 * readings (`data`, decoded one by one afterwards). */
export const MIN_REGISTER_DAYS_PER_PART = 30;
/** The same for reads of daily pieces only (a few dozen bytes a block): a
 * block is one index entry and one tuple, ~1 µs of PostgreSQL's time, so a register-year (365)
 * is one query — a second connection costs more than it saves (docs/benchmarks.md). */
export const MIN_ROLLUP_BLOCKS_PER_PART = 1000;

/**
 * @param alignMs time boundaries are multiples of this from the epoch; undefined = never split
 *   by time (local-day buckets of several registers, whose boundaries differ per register).
 * @param minPerPart register-days a part must have at least.
 */
export function splitQuery(registers: number, start: number, end: number, parts: number, alignMs: number | undefined, minPerPart = MIN_REGISTER_DAYS_PER_PART): QueryPart[] {
  const whole = [{ from: 0, to: registers, start, end }];
  const registerDays = (registers * (end - start)) / 86_400_000;
  const n = Math.min(parts, Math.floor(registerDays / minPerPart));
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
