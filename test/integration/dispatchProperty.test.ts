// Property: whatever sequence of acceptances, activations of reserved capacity, changes,
// cancellations and re-bindings happens, spread over two instances on one database with a
// restart of one of them in between, once dispatch has settled every transaction of a bound
// resource has exactly one event in the provider's VTN, showing its current figures (period,
// signed setpoint, correlation id, the VEN resource it is bound to now), and no event exists
// without a transaction (docs/flexibility-loop.md; the run is test/support/dispatchScenario.ts).
// The seed is printed; FC_SEED replays it.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DISPATCH_ENV, dispatchSequence, runDispatchSequence } from '../support/dispatchScenario.ts';
import { createTestDatabase, startTestApp, type TestApp } from '../support/testApp.ts';

describe('dispatch: one current event per transaction, none without one', () => {
  const instances: TestApp[] = [];
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    instances.push(await startTestApp(DISPATCH_ENV, databaseUrl), await startTestApp(DISPATCH_ENV, databaseUrl));
  });
  afterAll(async () => {
    for (const t of instances) await t.close();
  });

  it('holds for random sequences over two instances and a restart', async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    console.log(`dispatch property: seed ${seed} (FC_SEED=${seed} replays it)`);
    await fc.assert(
      fc.asyncProperty(dispatchSequence, (ops) => runDispatchSequence(instances, databaseUrl, ops)),
      { numRuns: 4, seed, endOnFailure: true },
    );
  }, 240_000);
});
