// The QuestDB store's background work against a real QuestDB (skipped with the reason without
// one): the purge of deleted registers' rows (writes meanwhile lose nothing; a purge killed
// half-way is finished, never lost), and the replay of orphaned batches with several instances
// (an orphan lands before a later batch of the same readings; a batch whose writer lives is left
// to it). docs/questdb.md, "Delete" and "Several instances". Each store here is an instance: its
// own QuestDB pool, sharing one PostgreSQL database and one QuestDB table.
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { BatchJournal, packRows } from '../../src/store/timeseries/questdb/journal.ts';
import { PartitionGate } from '../../src/store/timeseries/questdb/purge.ts';
import { versionsTableOf } from '../../src/store/timeseries/questdb/versions.ts';
import type { ReadingRows } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from '../support/testApp.ts';

const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const log = pino({ level: 'silent' });
const workers = new WorkerPool(1);
const pools: Pool[] = [];
const tables: string[] = [];
let questdb: pg.Client;

beforeAll(async () => {
  if (!questdbHttp || !questdbPg) return;
  questdb = new pg.Client({ connectionString: questdbPg });
  await questdb.connect();
});
afterAll(async () => {
  for (const table of tables) for (const name of [table, versionsTableOf(table)]) await questdb?.query(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  await questdb?.end();
  for (const p of pools) await p.end();
  await workers.close();
});

const DAY = 86_400_000;
const Q = 900_000;

function rows(registerId: number, start: number, count: number, step: number, value: (i: number) => number): ReadingRows {
  return {
    registerIds: [registerId],
    offsets: Int32Array.from([0, count]),
    timestamps: Float64Array.from({ length: count }, (_, i) => start + i * step),
    values: Float64Array.from({ length: count }, (_, i) => value(i)),
    resolutions: new Int32Array(count).fill(900),
  };
}

/** Rows of a register on disk, tombstones ignored. */
async function onDisk(table: string, registerId: number): Promise<{ ts: number; value: number }[]> {
  const { rows: found } = await questdb.query(`SELECT cast(ts AS long) AS ts, value FROM ${table} WHERE register_id = '${registerId}' ORDER BY ts`);
  return found.map((r) => ({ ts: Number(r.ts) / 1000, value: r.value }));
}

describe.skipIf(!questdbHttp || !questdbPg)('QuestDB purge and replay (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  /** A PostgreSQL database and a QuestDB table shared by the instances `open` makes. */
  async function installation() {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const databaseUrl = await createTestDatabase();
    const table = `purge_${process.pid}_${tables.length}`;
    tables.push(table);
    const stores: { close(): Promise<void> }[] = [];
    const open = async (options: Partial<Parameters<typeof QuestDbTimeSeriesStore.connect>[0]> = {}) => {
      const pool = createPool(databaseUrl, 6, log);
      pools.push(pool);
      const store = await QuestDbTimeSeriesStore.connect({ httpUrl: questdbHttp!, pgUrl: questdbPg!, table, purgeIntervalMs: 0, purgeAfterMs: 0, ...options }, { pool, workers, log });
      stores.push(store);
      return { store, pool };
    };
    /** A writer of another instance that journals a batch (its session owning the entry) and
     * sends nothing; die() ends its session, as a SIGKILL of its process would. */
    const writer = async (batch: ReadingRows, updatedAtMs: number) => {
      const pool = createPool(databaseUrl, 2, log);
      const entry = await new BatchJournal(pool).begin(batch, updatedAtMs, { send: async () => undefined, keepVersions: async () => undefined, gate: new PartitionGate(table, versionsTableOf(table), async () => 0) });
      await entry.ready;
      return {
        die: async () => {
          await entry.abandon();
          await pool.end();
        },
      };
    };
    return { table, open, writer, close: () => Promise.all(stores.map((s) => s.close())) };
  }

  it('purges a deleted register’s rows from disk while another register is written, losing nothing', async () => {
    const site = await installation();
    const { store, pool } = await site.open();
    const doomed = 7001;
    const kept = 7002;
    const start = Date.UTC(2030, 0, 1);
    // 90 days: rows in three month partitions, of both registers.
    await store.write({ rows: rows(doomed, start, 90 * 24, 3_600_000, (i) => i), updatedAtMs: start });
    await store.write({ rows: rows(kept, start, 90 * 24, 3_600_000, (i) => -i), updatedAtMs: start });
    await store.deleteRegister(doomed);
    expect(await store.hasReadings(doomed)).toBe(false);
    expect((await onDisk(site.table, doomed)).length).toBe(90 * 24);

    // Writes of `kept` into the same months, at quarter hours the first write left empty, until
    // the purge is done.
    const written: number[] = [];
    let purging = true;
    const writer = (async () => {
      for (let k = 0; purging || k < 3; k += 1) {
        const at = start + (k % 90) * DAY + Math.floor(k / 90) * Q + Q;
        await store.write({ rows: rows(kept, at, 1, Q, () => 1000 + k), updatedAtMs: start });
        written.push(at);
      }
    })();
    let steps = 0;
    try {
      for (let done = await store.purge(); done > 0; done = await store.purge()) steps += done;
    } finally {
      purging = false;
      await writer;
    }
    expect(steps).toBeGreaterThanOrEqual(4); // three partitions, then the tombstone
    expect(await onDisk(site.table, doomed)).toEqual([]);
    const keptRows = await onDisk(site.table, kept);
    expect(keptRows.length).toBe(90 * 24 + written.length);
    const byTs = new Map(keptRows.map((r) => [r.ts, r.value]));
    written.forEach((at, k) => expect(byTs.get(at), `write ${k}`).toBe(1000 + k));
    for (let i = 0; i < 90 * 24; i += 1) expect(byTs.get(start + i * 3_600_000)).toBe(-i);
    expect((await pool.query('SELECT count(*) AS n FROM timeseries_tombstones')).rows[0].n).toBe(0);
    expect((await pool.query('SELECT count(*) AS n FROM timeseries_purges')).rows[0].n).toBe(0);
    const { rows: scratch } = await questdb.query(`SELECT table_name FROM tables() WHERE table_name LIKE '${site.table}_purge_%'`);
    expect(scratch).toEqual([]);
    await site.close();
  }, 120_000);

  // A purge stopped at each point (the session ends as in a SIGKILL): before its record, the month
  // is untouched and the next step starts over; after it, the next write into the month (of any
  // instance) finishes the purge before it writes. Either way every kept row stays.
  it.each([
    ['copied', 96, []],
    ['dropped', 0, [{ partition: '2030-06', kept: 96 }]],
    ['inserted', 96, [{ partition: '2030-06', kept: 96 }]],
  ] as const)('loses nothing when a purge is killed once it has %s', async (step, keptAfterCrash, records) => {
    const site = await installation();
    const crash = new Error('killed here');
    const { store: first, pool } = await site.open({
      purgeCheckpoint: (at) => {
        if (at === step) throw crash;
      },
    });
    const start = Date.UTC(2030, 5, 1);
    await first.write({ rows: rows(8001, start, 96, Q, (i) => i), updatedAtMs: start });
    await first.write({ rows: rows(8002, start, 96, Q, (i) => 2 * i), updatedAtMs: start });
    await first.deleteRegister(8001);
    await expect(first.purge()).rejects.toBe(crash);
    expect((await onDisk(site.table, 8002)).length).toBe(keptAfterCrash);
    expect((await pool.query('SELECT partition, kept FROM timeseries_purges')).rows).toEqual(records);

    // Another instance writes into that month, then purges until there is nothing left to do.
    const { store: second } = await site.open();
    await second.write({ rows: rows(8002, start + 96 * Q, 4, Q, (i) => 500 + i), updatedAtMs: start });
    expect((await pool.query('SELECT count(*) AS n FROM timeseries_purges')).rows[0].n).toBe(0);
    while ((await second.purge()) > 0);
    expect((await onDisk(site.table, 8002)).map((r) => r.value)).toEqual([...Array.from({ length: 96 }, (_, i) => 2 * i), 500, 501, 502, 503]);
    expect(await onDisk(site.table, 8001)).toEqual([]);
    expect((await pool.query('SELECT count(*) AS n FROM timeseries_tombstones')).rows[0].n).toBe(0);
    const { rows: scratch } = await questdb.query(`SELECT table_name FROM tables() WHERE table_name LIKE '${site.table}_purge_%'`);
    expect(scratch).toEqual([]);
    await site.close();
  }, 120_000);

  it('replays an orphaned batch before a later batch of the same readings, on another instance', async () => {
    const site = await installation();
    const { store: a, pool } = await site.open();
    const start = Date.UTC(2030, 8, 1);
    // A writer journals a batch and dies before sending it (its session, the owner, ends).
    await (await site.writer(rows(9001, start, 8, Q, () => 1), start)).die();
    // A later batch of the same readings through another instance: the orphan lands first.
    const { store: b } = await site.open({ purgeIntervalMs: 0 });
    expect((await onDisk(site.table, 9001)).map((r) => r.value)).toEqual(Array(8).fill(1)); // b's start replayed it
    await a.write({ rows: rows(9001, start, 8, Q, () => 2), updatedAtMs: start + 1 });
    expect((await onDisk(site.table, 9001)).map((r) => r.value)).toEqual(Array(8).fill(2));

    // Now an orphan left while an instance is up: the next write of those readings sends it first.
    await (await site.writer(rows(9001, start, 4, Q, () => 3), start)).die();
    await b.write({ rows: rows(9001, start + 2 * Q, 4, Q, () => 4), updatedAtMs: start + 2 });
    expect((await onDisk(site.table, 9001)).map((r) => r.value)).toEqual([3, 3, 4, 4, 4, 4, 2, 2]);
    expect((await pool.query('SELECT count(*) AS n FROM timeseries_pending_batches')).rows[0].n).toBe(0);
    expect(await a.replayPending()).toBe(0);
    expect((await onDisk(site.table, 9001)).map((r) => r.value)).toEqual([3, 3, 4, 4, 4, 4, 2, 2]);
    await site.close();
  }, 120_000);

  it('drops an entry whose parts never committed (nothing of it was sent) and replays one an older Flex left whole', async () => {
    const site = await installation();
    const { store, pool } = await site.open();
    const start = Date.UTC(2031, 0, 1);
    // A writer that died between its two steps: the header committed, its parts did not.
    await pool.query('INSERT INTO timeseries_pending_batches (updated_at_ms, readings, parts, register_ids, first_ms, last_ms) VALUES ($1, 8, 1, $2, $3, $4)', [start, [9201], start, start + 7 * Q]);
    // An entry of the first layout: its packed rows in `rows`, no parts.
    await pool.query('INSERT INTO timeseries_pending_batches (updated_at_ms, readings, rows, register_ids, first_ms, last_ms) VALUES ($1, 8, $2, $3, $4, $5)', [start, packRows(rows(9202, start, 8, Q, (i) => i)), [9202], start, start + 7 * Q]);
    expect(await store.replayPending()).toBe(1);
    expect(await onDisk(site.table, 9201)).toEqual([]);
    expect((await onDisk(site.table, 9202)).map((r) => r.value)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect((await pool.query('SELECT count(*)::int AS n FROM timeseries_pending_batches')).rows[0].n).toBe(0);
    // A batch journaled now keeps its rows in parts, and the parts go with the entry.
    const live = await site.writer(rows(9203, start, 40_000, 1000, (i) => i / 1000), start);
    const { rows: parts } = await pool.query('SELECT count(*)::int AS n, sum(length(data))::int AS bytes FROM timeseries_pending_batch_parts');
    expect(parts[0].n).toBeGreaterThan(1);
    await live.die();
    expect(await store.replayPending()).toBe(1);
    expect((await onDisk(site.table, 9203)).map((r) => r.value)).toEqual(Array.from({ length: 40_000 }, (_, i) => i / 1000));
    expect((await pool.query('SELECT count(*)::int AS n FROM timeseries_pending_batch_parts')).rows[0].n).toBe(0);
    await site.close();
  }, 120_000);

  it('leaves a batch whose writer lives to it: an instance starting meanwhile does not send it, a later write waits for it', async () => {
    const site = await installation();
    const start = Date.UTC(2030, 10, 1);
    // A writer mid-batch (journaled, its session alive) while two instances start.
    const live = await site.writer(rows(9101, start, 8, Q, () => 1), start);
    const [{ store: a }, { store: b }] = [await site.open(), await site.open()];
    expect(await b.replayPending()).toBe(0);
    expect(await onDisk(site.table, 9101)).toEqual([]);
    // A later write of the same readings waits for that writer; the writer dies without sending:
    // the later write sends the orphan first, then itself.
    const later = a.write({ rows: rows(9101, start, 8, Q, () => 2), updatedAtMs: start + 1 });
    await live.die();
    await later;
    expect((await onDisk(site.table, 9101)).map((r) => r.value)).toEqual(Array(8).fill(2));
    expect(await b.replayPending()).toBe(0);
    expect((await onDisk(site.table, 9101)).map((r) => r.value)).toEqual(Array(8).fill(2));
    await site.close();
  }, 120_000);
});
