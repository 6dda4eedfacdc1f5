// The dispatch property (test/integration/dispatchProperty.test.ts) looked at the VTN as soon as no
// remaining transaction was pending. A cancellation is answered before the dispatch job deletes
// its event, so when the last operations were cancellations the check could see their events
// still there and report "an event without a transaction" (seed 552773803 did). Settled now also
// means that no event waits for its deletion. This replays that sequence and, to make the
// dispatch job late every time, holds the lock of every dispatch row for a second after it (the
// job skips locked rows).
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DISPATCH_ENV, runDispatchSequence, type DispatchOp } from '../support/dispatchScenario.ts';
import { createTestDatabase, startTestApp, type TestApp } from '../support/testApp.ts';

const CANCELLED_LAST: DispatchOp[] = [
  { kind: 'restart', on: 1 },
  { kind: 'activate', on: 1, slot: 0, quantity: 8 },
  { kind: 'rebind', on: 1, resource: 1 },
  { kind: 'accept', on: 1, resource: 1, slot: 1, quantity: 17 },
  { kind: 'change', on: 0, pick: 1656932214, quantity: 16, shift: true },
  { kind: 'accept', on: 1, resource: 1, slot: 0, quantity: 9 },
  { kind: 'cancel', on: 1, pick: 812986184 },
  { kind: 'cancel', on: 1, pick: 1121445097 },
];

describe('dispatch property checked before cancelled events were deleted', () => {
  const instances: TestApp[] = [];
  let databaseUrl: string;
  let db: pg.Client;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    instances.push(await startTestApp(DISPATCH_ENV, databaseUrl), await startTestApp(DISPATCH_ENV, databaseUrl));
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    for (const t of instances) await t.close();
  });

  it('waits for the events of cancellations to go, and then finds none without a transaction', async () => {
    let released: Promise<unknown> = Promise.resolve();
    await runDispatchSequence(instances, databaseUrl, CANCELLED_LAST, async () => {
      await db.query('BEGIN');
      await db.query('SELECT transaction_id FROM flexibility_dispatches FOR UPDATE');
      released = new Promise((resolve) => setTimeout(resolve, 1000)).then(() => db.query('COMMIT'));
    });
    await released;
  }, 60_000);
});
