// The QuestDB store cuts a batch into chunks by time (chunks.ts): every row goes into exactly one
// chunk, no chunk is above 1.5 × chunkRows, and a batch in time order gives chunks that cover
// one span after another (what lets QuestDB append them instead of merging). The ILP written
// from a chunk that takes ranges of a whole batch's shared columns is the ILP of those rows.
import { describe, expect, it } from 'vitest';
import { encodeIlp } from '../../src/shared/readings/ilp.ts';
import { planChunks, type ChunkPlan } from '../../src/store/timeseries/questdb/chunks.ts';
import { chunkOf } from '../../src/store/timeseries/questdb/store.ts';
import type { ReadingRows } from '../../src/store/timeseries/types.ts';

const T0 = Date.UTC(2024, 0, 1);

/** Series of the given timestamps (ms after T0), ids 1, 2, …; columns in shared memory if asked. */
function batch(series: number[][], shared = false): ReadingRows {
  const n = series.reduce((sum, s) => sum + s.length, 0);
  const column = <T extends Float64Array | Int32Array>(C: { new (b: ArrayBufferLike): T; BYTES_PER_ELEMENT: number }) => new C(shared ? new SharedArrayBuffer(n * C.BYTES_PER_ELEMENT) : new ArrayBuffer(n * C.BYTES_PER_ELEMENT));
  const rows: ReadingRows = { registerIds: series.map((_, i) => i + 1), offsets: new Int32Array(series.length + 1), timestamps: column(Float64Array), values: column(Float64Array), resolutions: column(Int32Array) };
  let at = 0;
  series.forEach((times, s) => {
    for (const t of times) {
      rows.timestamps[at] = T0 + t;
      rows.values[at] = at / 8;
      rows.resolutions[at] = 900;
      at += 1;
    }
    rows.offsets[s + 1] = at;
  });
  return rows;
}

const regular = (series: number, readings: number) => Array.from({ length: series }, () => Array.from({ length: readings }, (_, i) => i * 900_000));

/** Each row of the batch is in exactly one chunk, and chunks stay within the limit. */
function expectPartition(rows: ReadingRows, plans: ChunkPlan[], chunkRows: number): void {
  const seen = new Uint8Array(rows.timestamps.length);
  for (const plan of plans) {
    expect(plan.rows).toBeLessThanOrEqual(chunkRows * 1.5);
    expect(plan.counts.reduce((a, b) => a + b, 0)).toBe(plan.rows);
    plan.series.forEach((s, k) => {
      const start = plan.starts[k]!;
      expect(start).toBeGreaterThanOrEqual(rows.offsets[s]!);
      expect(start + plan.counts[k]!).toBeLessThanOrEqual(rows.offsets[s + 1]!);
      for (let i = start; i < start + plan.counts[k]!; i += 1) seen[i]! += 1;
    });
  }
  expect(seen.every((x) => x === 1)).toBe(true);
}

const span = (rows: ReadingRows, plan: ChunkPlan) => {
  let first = Infinity;
  let last = -Infinity;
  plan.series.forEach((_, k) => {
    first = Math.min(first, rows.timestamps[plan.starts[k]!]!);
    last = Math.max(last, rows.timestamps[plan.starts[k]! + plan.counts[k]! - 1]!);
  });
  return { first, last };
};

describe('QuestDB chunks', () => {
  it('cuts a batch in time order into chunks covering one span after another', () => {
    const rows = batch(regular(100, 1000));
    const plans = planChunks(rows, 10_000);
    expectPartition(rows, plans, 10_000);
    expect(plans.length).toBeGreaterThanOrEqual(9);
    expect(plans.length).toBeLessThanOrEqual(11);
    for (let p = 1; p < plans.length; p += 1) expect(span(rows, plans[p]!).first).toBeGreaterThan(span(rows, plans[p - 1]!).last);
  });

  it('cuts series of different lengths and spans, and one instant for many registers, within the limit', () => {
    const mixed = batch([...regular(30, 2000), ...Array.from({ length: 50 }, (_, s) => Array.from({ length: 37 * s }, (_, i) => (s + i) * 60_000)), [5], []]);
    expectPartition(mixed, planChunks(mixed, 7_000), 7_000);
    const instant = batch(Array.from({ length: 25_000 }, () => [0]));
    const plans = planChunks(instant, 1_000);
    expectPartition(instant, plans, 1_000);
    expect(plans.length).toBeGreaterThanOrEqual(17);
  });

  it('cuts by rows a batch with a series out of time order, and keeps a small batch whole', () => {
    const rows = batch([...regular(10, 500), [3, 2, 1]]);
    const plans = planChunks(rows, 1_000);
    expectPartition(rows, plans, 1_000);
    expect(plans.slice(0, -1).every((p) => p.rows === 1_000)).toBe(true);
    expect(planChunks(batch(regular(3, 10)), 100)).toHaveLength(1);
  });

  it('writes the same ILP from shared columns read in ranges as from gathered copies', () => {
    const series = [...regular(20, 300), [1, 2, 3], ...regular(5, 50)];
    const shared = batch(series, true);
    const copied = batch(series, false);
    const plans = planChunks(shared, 1_000);
    expect(plans.length).toBeGreaterThan(3);
    const text = (rows: ReadingRows) => plans.map((plan) => Buffer.from(encodeIlp(chunkOf(rows, plan, 'readings', T0))).toString('latin1')).join('');
    const fromShared = text(shared);
    expect(chunkOf(shared, plans[0]!, 'readings', T0).starts).toBeDefined();
    expect(chunkOf(copied, plans[0]!, 'readings', T0).starts).toBeUndefined();
    expect(fromShared).toBe(text(copied));
    expect(fromShared.split('\n').filter(Boolean)).toHaveLength(shared.timestamps.length);
    expect(fromShared).toContain(`readings,register_id=21 value=750,resolution=900i,updated_at=${T0 * 1000}t ${T0 + 1}000000\n`);
  });
});
