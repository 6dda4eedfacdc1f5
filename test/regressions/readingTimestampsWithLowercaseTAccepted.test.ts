// Regression (found by test/unit/readingsBodyContract.test.ts): the reading-batch parser
// accepted `2024-01-20t00:15:00Z` (lowercase t) while the published POST /api/readings schema
// (utc-date-time, like every other timestamp of the API) refuses it.
import { describe, expect, it } from 'vitest';
import { parseReadings } from '../../src/shared/readings/parseReadings.ts';

describe('a reading timestamp with a lowercase t', () => {
  it('is refused with its path, like everywhere else in the API', () => {
    const body = { meters: [{ id: 'M1', registers: [{ id: 'R1', values: [{ timestamp: '2024-01-20t00:15:00Z', value: 1, resolution: 900 }] }] }] };
    const parsed = parseReadings(Buffer.from(JSON.stringify(body)));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toEqual([{ path: 'meters[0].registers[0].values[0].timestamp', message: expect.any(String) }]);
  });
});
