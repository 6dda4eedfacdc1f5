// Dispatch across a crash (docs/flexibility-loop.md, "Exactly once"): 2,000 transactions of a
// bound resource committed at once; the instance dispatching them is killed (SIGKILL) while it
// is at it; the next instance finishes. Every transaction then has exactly one event, named by
// its correlation id, and the VTN holds no other: nothing was lost and nothing written twice.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createLoopWorld } from '../support/loopFixtures.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { Api, createTestDatabase, startTestApp, type TestApp } from '../support/testApp.ts';
import { VTN, expectStatus, waitFor } from '../support/vtn.ts';

const ADMIN = `flex_pat_dispatch_crash_${'c'.repeat(32)}`;
const N = 2000;

describe('dispatch across a crash', () => {
  let flex: FlexProcess | undefined;
  let next: TestApp | undefined;
  let db: pg.Client | undefined;
  afterAll(async () => {
    if (flex && flex.child.exitCode === null && flex.child.signalCode === null) flex.child.kill('SIGKILL');
    await flex?.exited;
    await next?.close();
    await db?.end();
  });

  it('loses nothing and writes nothing twice when the dispatching instance is killed', async () => {
    const databaseUrl = await createTestDatabase();
    flex = await startFlexProcess({ DATABASE_URL: databaseUrl, ADMIN_TOKEN: ADMIN, DISPATCH_INTERVAL_MS: '50' });
    const api = new Api(flex.baseUrl);
    const w = await createLoopWorld({ api, adminToken: ADMIN } as TestApp);
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const start = new Date(Math.ceil((Date.now() + 7_200_000) / 3_600_000) * 3_600_000);
    const { rows: orders } = await db.query<{ id: number; market_id: number }>(
      `INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity, remaining_quantity, created_by)
       SELECT $1, $2, m.id, 1, $3, $3::timestamptz + interval '1 hour', $3::timestamptz - interval '1 hour', 1, 1, 1e6, 1e6, 'test' FROM markets m WHERE m.market_zone_id = $2
       RETURNING id, market_id`,
      [w.operator.organizationId, w.zoneId, start],
    );
    // One statement, as a clearing commits its transactions.
    await db.query(
      `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
         market_id, market_zone_id, product_type, start, "end", quantity, unit_price)
       SELECT $1, $2, $3, 's', 'b', $4, $5, $6, 1, $7, $7::timestamptz + interval '1 hour', 1 + g % 7, 1 FROM generate_series(1, $8) g`,
      [orders[0]!.id, w.provider.organizationId, w.operator.organizationId, w.resource.id, orders[0]!.market_id, w.zoneId, start, N],
    );
    const count = async (state: string) => (await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM flexibility_dispatches WHERE state = $1', [state])).rows[0]!.n;
    // Killed once some are sent and others still wait.
    await waitFor('dispatch under way', async () => ((await count('sent')) > 0 ? true : undefined), 60_000);
    flex.child.kill('SIGKILL');
    await flex.exited;
    const sentAtCrash = await count('sent');
    expect(sentAtCrash).toBeLessThan(N);

    next = await startTestApp({ ADMIN_TOKEN: ADMIN, DISPATCH_INTERVAL_MS: '50' }, databaseUrl);
    await waitFor('dispatch finished', async () => ((await count('pending')) === 0 ? true : undefined), 120_000);
    expect(await count('sent')).toBe(N);

    const { rows: dispatched } = await db.query<{ event_id: string; correlation: string }>(
      `SELECT d.event_id, t.transaction_correlation_id::text AS correlation FROM flexibility_dispatches d JOIN flexibility_transactions t ON t.id = d.transaction_id WHERE t.resource_id = $1`,
      [w.resource.id],
    );
    expect(new Set(dispatched.map((d) => d.event_id)).size).toBe(N);
    const events = new Map<string, string>();
    for (let skip = 0; ; skip += 50) {
      const page = await expectStatus(next.api.get(`${VTN}/events?skip=${skip}&limit=50`, w.bl.token), 200);
      for (const e of page) events.set(e.id, e.eventName);
      if (page.length < 50) break;
    }
    expect(events.size).toBe(N);
    for (const d of dispatched) expect(events.get(d.event_id)).toBe(d.correlation);
  }, 240_000);
});
