// Regression: the engine counted event days up to the day after the last requested bucket and
// widened every target day's search for similar days by that count, so a day's baseline changed
// when a later day became an event day (which accepting flexibility for that day does). Oslo,
// hourly readings from 1 February 2024 with 12:00 missing on 2, 3 and 9 March, event days 19–21
// March: the Average10Of10 of Saturday 6 April had no value, and gained one once Sunday 7 April
// became an event day. A baseline that settled money must give the same figure afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { osloBaseline } from '../support/baselineFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
});
afterAll(() => t?.close());

// Friday 5 and Saturday 6 April, Oslo.
const DAYS = ['2024-04-04T22:00:00Z', '2024-04-06T22:00:00Z'] as const;

describe('a baseline day', () => {
  it('keeps its values when a later day becomes an event day', async () => {
    const b = await osloBaseline(t);
    await b.setEventDays(['2024-03-19', '2024-03-20', '2024-03-21']);
    const before = await b.read(...DAYS);
    // Friday has its 10 weekdays; the 48 days before Saturday (45, widened by the 3 event days)
    // hold 9 usable weekend days (2, 3 and 9 March miss 12:00, 31 March has no 02:00): no value.
    expect([...before.keys()].filter((t) => t < '2024-04-05T22:00:00Z')).toHaveLength(24);
    expect([...before.keys()].filter((t) => t >= '2024-04-05T22:00:00Z')).toHaveLength(0);
    await b.setEventDays(['2024-03-19', '2024-03-20', '2024-03-21', '2024-04-07']);
    expect(await b.read(...DAYS)).toEqual(before);
    await b.setEventDays(['2024-03-19', '2024-03-20', '2024-03-21', '2024-04-07', '2024-04-08', '2024-04-09']);
    expect(await b.read(...DAYS)).toEqual(before);
  });
});
