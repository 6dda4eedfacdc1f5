// Regression (found by test/unit/readingsBodyContract.test.ts): parseUtcTimestamp, which
// reads every UTC timestamp outside POST /api/readings (query periods, bodies, the utc-date-time
// format), built the instant with Date.UTC, which reads years 0–99 as 1900–1999. A reading posted
// at 0050-06-01 was stored at year 50 by the batch parser while a query for 0050-06-01 asked for
// 1950; and the parser filed such a reading under the month partition of 1950 (monthsOf).
import { describe, expect, it } from 'vitest';
import { parseUtcTimestamp } from '../../src/http/validation.ts';
import { monthsOf, parseTimestampBytes } from '../../src/shared/readings/parseReadings.ts';

describe('UTC timestamps before year 100', () => {
  it('are read as written, by the API and by the reading-batch parser alike', () => {
    for (const s of ['0000-01-01T00:00:00Z', '0050-06-01T12:30:00.25Z', '0099-12-31T23:59:59Z', '0004-02-29T00:00:00Z']) {
      expect(parseUtcTimestamp(s), s).toBe(Date.parse(s));
      expect(parseTimestampBytes(Buffer.from(s), 0, s.length), s).toBe(Date.parse(s));
    }
    expect(parseUtcTimestamp('0001-02-29T00:00:00Z')).toBeUndefined();
  });

  it('fall in their own month', () => {
    expect(monthsOf(new Float64Array([Date.parse('0050-06-15T00:00:00Z'), Date.parse('0099-12-31T23:00:00Z')]))).toEqual([Date.parse('0050-06-01T00:00:00Z'), Date.parse('0099-12-01T00:00:00Z')]);
  });
});
