// The fuzz test's body mutations (test/support/requestArbitraries.ts, `mutated`) put the shared
// hostile constants themselves into bodies; two mutations landing on the same constant made it
// contain itself, so JSON.stringify threw ("Converting circular structure to JSON") and the
// shared constant stayed changed for every later run (seed 177575309 failed that way).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HOSTILE_VALUES, mutated } from '../support/requestArbitraries.ts';

describe('fuzz body mutations', () => {
  it('never produce a cycle nor change the hostile constants', () => {
    const before = JSON.stringify(HOSTILE_VALUES.filter((v) => typeof v === 'object' && v !== null && JSON.stringify(v).length < 10_000));
    const bodies = fc.sample(mutated(fc.constant({ a: { b: [1, { c: 'x' }] } })), { numRuns: 3000, seed: 177575309 });
    for (const body of bodies) expect(() => JSON.stringify(body)).not.toThrow();
    expect(JSON.stringify(HOSTILE_VALUES.filter((v) => typeof v === 'object' && v !== null && JSON.stringify(v).length < 10_000))).toBe(before);
  });
});
