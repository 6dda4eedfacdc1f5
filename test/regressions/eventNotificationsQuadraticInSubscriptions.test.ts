// An event's POST took 10.5 s (and, on the uWebSockets.js front, sometimes lost its connection)
// with 10,000 webhook subscriptions of one VEN client holding 10,000 VENs. Two costs grew with
// subscriptions × subscriptions or subscriptions × VENs:
//   - the outbox's matching statement was a named (prepared once per connection) statement: its
//     generic plan, built on a connection's sixth change while vtn_subscriptions was empty, kept
//     reading every callback again for each subscription until the next ANALYZE;
//   - a targeted event compared each VEN-owned subscription with its client's whole reach, read
//     again for every subscription;
//   - a batch of changes (a clearing's dispatch) joined its notifications back to the inserted
//     changes in a nested loop (changes × notifications), and so did the first form of its
//     reach check.
// Counted without timing: the rows each table's scans read for one event, from the plan the
// statement ran with (auto_explain, as a notice to the connection), after the connection has
// written changes while the tables were empty, as a connection of the platform's pool does.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueNotifications, enqueueNotificationsMany, type Change } from '../../src/vtn/outbox.ts';
import { targetKeys } from '../../src/vtn/targets.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const N = 300;

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let db: pg.PoolClient;
let programId: string;

const change = (names: string[], objectId = `probe-${names.length}`): Change => {
  const targets = names.length ? [{ type: 'VEN_NAME', values: names }] : null;
  return { organizationId: bl.organizationId, kind: 'EVENT', operation: 'POST', objectId, doc: '{}', targets, targetKeys: targetKeys(targets), programId, ownerClientId: null };
};

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows each table's scans read in a plan (returned plus filtered out, times their loops), and
 * under '*' the rows every node of the plan handled (joins' filtered pairs too). */
function rowsRead(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  const rows = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1);
  const table = node['Relation Name'];
  if (table) into.set(table, (into.get(table) ?? 0) + rows);
  into.set('*', (into.get('*') ?? 0) + rows + (node['Rows Removed by Join Filter'] ?? 0) * (node['Actual Loops'] ?? 1));
  for (const child of node.Plans ?? []) rowsRead(child, into);
  return into;
}

/** The notifications of one event (rolled back), and the rows its statement read, from the plan
 * it ran with (auto_explain, sent to the connection as a notice). */
async function enqueue(targets: string[] | Change[]): Promise<{ written: number; read: Map<string, number> }> {
  const plans: PlanNode[] = [];
  const onNotice = (msg: { message?: string }) => {
    const text = msg.message ?? '';
    const json = text.slice(text.indexOf('{'));
    if (text.includes('"Plan"')) plans.push((JSON.parse(json) as { Plan: PlanNode }).Plan);
  };
  db.on('notice', onNotice);
  await db.query('BEGIN');
  try {
    const written = typeof targets[0] === 'object' ? await enqueueNotificationsMany(db, targets as Change[]) : await enqueueNotifications(db, change(targets as string[]));
    const read = new Map<string, number>();
    for (const plan of plans) rowsRead(plan, read);
    return { written, read };
  } finally {
    await db.query('ROLLBACK');
    db.off('notice', onNotice);
  }
}

beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '60000' }));
  programId = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'fan-out' }, bl.token), 201)).id;
  db = await t.app.pool.connect();
  await db.query("LOAD 'auto_explain'");
  for (const [k, v] of Object.entries({ log_min_duration: '0', log_analyze: 'on', log_format: 'json', log_level: 'notice', log_nested_statements: 'on' })) await db.query(`SET auto_explain.${k} = '${v}'`);
  // The connection writes changes while nothing is subscribed yet (a fresh instance's first
  // events): more than the five executions after which PostgreSQL may keep a generic plan.
  for (let i = 0; i < 8; i += 1) expect((await enqueue([])).written).toBe(0);
  // One VEN client with N VENs, each with a subscription to the program's events.
  for (let i = 0; i < N; i += 1) await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: `ven-${i}`, clientID: ven.clientId }, bl.token), 201);
  for (let i = 0; i < N; i += 1)
    await expectStatus(
      t.api.post(`${V31}/subscriptions`, { clientName: `ven-${i}`, programID: programId, objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: `http://127.0.0.1:9/ven/${i}`, bearerToken: `token-${i}` }] }, ven.token),
      201,
    );
}, 180_000);

afterAll(async () => {
  db?.release();
  await t?.close();
});

describe('an event for many subscriptions of one VEN client', () => {
  it('reads each subscription a bounded number of times, however the connection planned it before', async () => {
    const untargeted = await enqueue([]);
    expect(untargeted.written).toBe(N);
    expect(untargeted.read.get('vtn_subscriptions')).toBeGreaterThanOrEqual(N);
    for (const [table, rows] of untargeted.read) if (table !== '*') expect(rows, table).toBeLessThanOrEqual(4 * N);
  });

  it('reads the client’s VENs once for a targeted event, not once per subscription', async () => {
    const targeted = await enqueue(['ven-1', 'ven-7']);
    // The client reaches ven-1: every one of its subscriptions hears of the event.
    expect(targeted.written).toBe(N);
    expect(targeted.read.get('vtn_vens')).toBeGreaterThanOrEqual(1);
    for (const [table, rows] of targeted.read) if (table !== '*') expect(rows, table).toBeLessThanOrEqual(4 * N);
    // A name none of its VENs has: none of them.
    expect((await enqueue(['someone-else'])).written).toBe(0);
  });

  it('writes a batch of targeted events (a clearing’s dispatch) handling each (event, subscription) pair a bounded number of times', async () => {
    const events = Array.from({ length: 40 }, (_, k) => change([`ven-${k}`], `batch-${k}`));
    const batch = await enqueue(events);
    expect(batch.written).toBe(40 * N);
    // 40 events × N subscriptions are inherent; a nested loop over changes and notifications
    // handled 40 times that.
    expect(batch.read.get('*')).toBeLessThanOrEqual(10 * 40 * N);
  });
});
