// The QuestDB store copies the stored values a batch replaces into the versions table, selecting
// them by the batch's keys (versions.ts): evenly spaced runs as a range and a step, the other
// readings listed. The key sets must name exactly the batch's (register, timestamp)s, whatever
// the shape of its series, and the copy statements must cover every set once, with literals only.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyStatements, keySets, type KeySet } from '../../src/store/timeseries/questdb/versions.ts';
import type { ReadingRows } from '../../src/store/timeseries/types.ts';

const T0 = Date.UTC(2024, 0, 1);

function batch(series: { id: number; times: number[] }[]): ReadingRows {
  const all = series.flatMap((s) => s.times);
  const offsets = new Int32Array(series.length + 1);
  series.forEach((s, k) => (offsets[k + 1] = offsets[k]! + s.times.length));
  return {
    registerIds: series.map((s) => s.id),
    offsets,
    timestamps: Float64Array.from(all, (t) => T0 + t),
    values: new Float64Array(all.length),
    resolutions: new Int32Array(all.length).fill(900),
  };
}

/** Every key a set names, as `register@ms`. */
function keysOf(sets: KeySet[]): string[] {
  const out: string[] = [];
  for (const set of sets) {
    const times = set.stamps ?? Array.from({ length: (set.last - set.first) / set.step! + 1 }, (_, i) => set.first + i * set.step!);
    for (const id of set.registers) for (const t of times) out.push(`${id}@${t}`);
  }
  return out.sort();
}

const series = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }).chain((ids) =>
  fc.tuple(
    ...ids.map((id) =>
      fc.oneof(
        // Meter data: evenly spaced, perhaps with gaps.
        fc.record({ start: fc.integer({ min: 0, max: 96 }), count: fc.integer({ min: 1, max: 200 }), step: fc.constantFrom(60_000, 900_000, 3_600_000), gaps: fc.uniqueArray(fc.nat(199), { maxLength: 5 }) }).map(({ start, count, step, gaps }) => ({
          id,
          times: Array.from({ length: count }, (_, i) => (start + i) * step).filter((_, i) => !gaps.includes(i)),
        })),
        // Anything.
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 60 }).map((times) => ({ id, times: times.sort((a, b) => a - b) })),
      ),
    ),
  ),
);

describe('the keys of a batch, for copying what it replaces', () => {
  it('name exactly the batch’s (register, timestamp)s', () => {
    fc.assert(
      fc.property(series, (all) => {
        const rows = batch(all);
        const expected = all.flatMap((s) => s.times.map((t) => `${s.id}@${T0 + t}`)).sort();
        expect(keysOf(keySets(rows))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('take a whole evenly spaced series as one range, and series of the same range and step together', () => {
    const times = Array.from({ length: 96 }, (_, i) => i * 900_000);
    const sets = keySets(batch([1, 2, 3].map((id) => ({ id, times }))));
    expect(sets).toEqual([{ registers: [1, 2, 3], first: T0, last: T0 + 95 * 900_000, step: 900_000 }]);
  });

  it('are copied by statements that each cover some sets, literals only', () => {
    fc.assert(
      fc.property(series, (all) => {
        const rows = batch(all);
        const statements = copyStatements(rows, 'readings', T0 + 5);
        const sets = keySets(rows);
        expect(statements.length).toBeGreaterThanOrEqual(Math.ceil(sets.length / 32));
        for (const { copy, done } of statements) {
          expect(copy).toMatch(/^INSERT INTO readings_versions SELECT \* FROM \(/);
          expect(copy).toContain(`cast(${(T0 + 5) * 1000} AS timestamp) AS superseded_at`);
          expect(done).toContain(`superseded_at = ${(T0 + 5) * 1000}`);
          // No bind parameters: QuestDB 7.4 runs no INSERT … SELECT that has them.
          expect(copy).not.toMatch(/\$\d/);
        }
        // Every register with readings in the batch is named by some statement.
        for (const s of all.filter((x) => x.times.length > 0)) expect(statements.some(({ copy }) => copy.includes(`'${s.id}'`))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
