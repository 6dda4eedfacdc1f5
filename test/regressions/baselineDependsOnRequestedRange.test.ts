// Regression: a day's baseline depended on the range it was asked in. The engine widened the
// search for similar days by the event days up to the day after the last requested bucket, and
// compared days only over the requested intervals of the target day (and adjusted from the first
// of them), so Saturday 6 April (Oslo, the history of baselineFixtures.ts, event days 19–21 March
// and 8 April) had no Average10Of10 value asked alone, and one asked as part of 6–9 April; asked
// for its first hours only, it had values the whole day did not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { osloBaseline, slice } from '../support/baselineFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
});
afterAll(() => t?.close());

describe('a baseline day', () => {
  it('has the same values whatever range it is asked in', async () => {
    const b = await osloBaseline(t);
    await b.setEventDays(['2024-03-19', '2024-03-20', '2024-03-21', '2024-04-08']);
    const saturday = await b.read('2024-04-05T22:00:00Z', '2024-04-06T22:00:00Z');
    expect(saturday.size).toBe(0); // 9 usable weekend days in the 48 days before it
    const friday = await b.read('2024-04-04T22:00:00Z', '2024-04-05T22:00:00Z');
    expect(friday.size).toBe(24);
    const week = await b.read('2024-04-01T22:00:00Z', '2024-04-09T22:00:00Z');
    expect(slice(week, '2024-04-05T22:00:00Z', '2024-04-06T22:00:00Z')).toEqual(saturday);
    expect(slice(week, '2024-04-04T22:00:00Z', '2024-04-05T22:00:00Z')).toEqual(friday);
    expect(await b.read('2024-04-05T22:00:00Z', '2024-04-06T04:00:00Z')).toEqual(new Map());
    expect(await b.read('2024-04-05T14:00:00Z', '2024-04-05T17:00:00Z')).toEqual(slice(friday, '2024-04-05T14:00:00Z', '2024-04-05T17:00:00Z'));
  });
});
