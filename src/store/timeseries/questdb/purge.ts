// Purging deleted registers' rows from QuestDB, and the partition gate every write passes.
// docs/questdb.md ("Delete") has the design; migration 007 the PostgreSQL side.
//
// QuestDB 7.4 has no row DELETE; it can drop a partition (a month of the table) and insert rows.
// A purge rewrites one partition holding rows of tombstoned registers at a time:
//   1. take the partition's advisory lock exclusively: writes to that month wait (each write
//      holds the locks of the months it writes to, shared, until QuestDB has applied it), and
//      wait until QuestDB has applied the table's WAL;
//   2. copy the rows to keep into a scratch table (`CREATE TABLE … AS SELECT`, no WAL) and verify
//      its count against the partition's;
//   3. record the purge in PostgreSQL (timeseries_purges): from here on it is finished by
//      whoever finds it, and no write enters the month until it is;
//   4. drop the partition, insert the scratch rows back, verify the count, delete the record,
//      drop the scratch table.
// A SIGKILL before 3 leaves the partition untouched (the scratch table is dropped next time);
// after 3, steps 4 are repeated (dropping and re-inserting the verified copy again is harmless,
// since nothing else entered the month meanwhile), at the next purge step of any instance or by
// the first write to that month. The versions table (versions.ts) is purged the same way, month
// by month of `superseded_at`, once the readings table holds none of the registers' rows; a
// write enters the month its replaced versions go to as well. Once a tombstoned register has no
// rows left in either table, its tombstone goes.
import type { Logger } from 'pino';
import type { Pool, PoolClient } from '../../database.ts';
import type { ReadingRows } from '../types.ts';

/** Advisory lock namespaces (the two-int form: class, object) of the QuestDB store. */
export const LOCKS = { entry: 0x51444201, partition: 0x51444202, purger: 0x51444203, versionsPartition: 0x51444204 } as const;
/** The partition lock a write of more than MAX_PARTITION_LOCKS months takes instead of theirs
 * (an import of years): a purge takes it too. Keeps the lock table small. */
const WIDE = -1;
const MAX_PARTITION_LOCKS = 16;

/** year * 12 + month (UTC) of an instant: the key of its QuestDB partition (PARTITION BY MONTH). */
export const monthOf = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};
/** The first instant of a month key (years below 100 too, which Date.UTC would shift). */
function monthStart(month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(Math.floor(month / 12), month % 12, 1);
  return d.getTime();
}
/** QuestDB's name of a month partition: `YYYY-MM`. */
export const partitionName = (month: number) => `${String(Math.floor(month / 12)).padStart(4, '0')}-${String((month % 12) + 1).padStart(2, '0')}`;
export const monthOfName = (name: string) => Number(name.slice(0, 4)) * 12 + Number(name.slice(5, 7)) - 1;
const literal = (ms: number) => `'${new Date(ms).toISOString()}'`;

/** The months a batch writes to (each series' first to last month), or 'wide' past the limit. */
export function partitionsOf(rows: ReadingRows): number[] | 'wide' {
  const months = new Set<number>();
  for (let s = 0; s + 1 < rows.offsets.length; s += 1) {
    const a = rows.offsets[s]!;
    const b = rows.offsets[s + 1]! - 1;
    if (b < a) continue;
    const last = monthOf(rows.timestamps[b]!);
    for (let m = monthOf(rows.timestamps[a]!); m <= last; m += 1) {
      months.add(m);
      if (months.size > MAX_PARTITION_LOCKS) return 'wide';
    }
  }
  return [...months].sort((x, y) => x - y);
}

/** The partition locks a write holds: its months of the readings table, and the month of the
 * versions table its replaced versions go to (its recordedAt's). */
export interface GateKeys {
  months: number[];
  versionsMonth: number;
}

/** Writes enter the partitions they write to through here (shared locks), purges exclusively. */
export class PartitionGate {
  constructor(
    private readonly table: string,
    private readonly versionsTable: string,
    /** Finishes the interrupted purges of the tables (on the writer's session). */
    private readonly finishInterrupted: (client: PoolClient) => Promise<unknown>,
  ) {}

  /** Takes the shared locks of the months `rows` write to (and of the versions month of
   * `recordedAtMs`) once no interrupted purge holds one of them (finishing it first); returns
   * the keys for leave(). */
  async enter(client: PoolClient, rows: ReadingRows, recordedAtMs: number): Promise<GateKeys> {
    const months = partitionsOf(rows);
    const keys = { months: months === 'wide' ? [WIDE] : months, versionsMonth: monthOf(recordedAtMs) };
    for (;;) {
      await client.query('SELECT pg_advisory_lock_shared($1, k) FROM unnest($2::int[]) AS k UNION ALL SELECT pg_advisory_lock_shared($3, $4)', [
        LOCKS.partition,
        keys.months,
        LOCKS.versionsPartition,
        keys.versionsMonth,
      ]);
      // A separate statement: its snapshot is taken after the locks are held.
      const { rows: held } = await client.query('SELECT 1 FROM timeseries_purges WHERE (table_name = $1 AND ($2 OR partition = ANY($3))) OR (table_name = $4 AND partition = $5) LIMIT 1', [
        this.table,
        months === 'wide',
        months === 'wide' ? [] : months.map(partitionName),
        this.versionsTable,
        partitionName(keys.versionsMonth),
      ]);
      if (held.length === 0) return keys;
      await this.leave(client, keys);
      await this.finishInterrupted(client);
    }
  }

  async leave(client: PoolClient, keys: GateKeys): Promise<void> {
    await client.query('SELECT pg_advisory_unlock_shared($1, k) FROM unnest($2::int[]) AS k UNION ALL SELECT pg_advisory_unlock_shared($3, $4)', [
      LOCKS.partition,
      keys.months,
      LOCKS.versionsPartition,
      keys.versionsMonth,
    ]);
  }
}

/** A table the purge rewrites month by month: its designated timestamp, the lock class its
 * writers hold per month, and whether writes of many months hold the WIDE lock instead. */
interface PurgeTarget {
  table: string;
  ts: string;
  lock: number;
  wide: boolean;
}

export interface PurgeDeps {
  /** The platform's PostgreSQL: tombstones, the journal, timeseries_purges, the locks. */
  pool: Pool;
  table: string;
  /** The readings table's versions table (versions.ts). */
  versionsTable: string;
  /** A statement to QuestDB; rows as arrays, longs as numbers. */
  questdb: (sql: string) => Promise<unknown[][]>;
  /** Waits until QuestDB has applied every transaction of the table's WAL. */
  applied: () => Promise<void>;
  log: Logger;
  /** Tombstones younger than this are left for a later step (a write that resolved the register
   * before it was deleted may still be on its way). */
  afterMs: number;
  /** Tests: called after each step of a partition's purge; a throw stands for a crash there. */
  checkpoint?: (step: 'copied' | 'recorded' | 'dropped' | 'inserted') => void;
}

interface PurgeRecord {
  table: string;
  partition: string;
  scratch: string;
  kept: number;
}

export class Purger {
  private readonly targets: PurgeTarget[];
  constructor(private readonly deps: PurgeDeps) {
    this.targets = [
      { table: deps.table, ts: 'ts', lock: LOCKS.partition, wide: true },
      { table: deps.versionsTable, ts: 'superseded_at', lock: LOCKS.versionsPartition, wide: false },
    ];
  }

  private target(table: string): PurgeTarget {
    const target = this.targets.find((t) => t.table === table);
    if (!target) throw new Error(`QuestDB purge: ${table} is not a table of this store`);
    return target;
  }

  /** One step: finishes interrupted purges, then purges one partition holding rows of tombstoned
   * registers, or drops the tombstones of registers with no rows left. Returns what it did
   * (partitions and tombstones; 0: nothing to do, or another instance is purging). */
  async step(): Promise<number> {
    const { pool, questdb } = this.deps;
    const client = await pool.connect();
    let broken = false;
    try {
      const { rows: got } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, 0) AS got', [LOCKS.purger]);
      if (!got[0]!.got) return 0;
      const finished = await this.finish(client);
      // Registers deleted a while ago that no pending batch writes to any more.
      const { rows } = await client.query<{ register_id: string }>(
        `SELECT register_id FROM timeseries_tombstones t WHERE deleted_at <= now() - $1 * interval '1 millisecond'
           AND NOT EXISTS (SELECT 1 FROM timeseries_pending_batches p WHERE p.register_ids @> ARRAY[t.register_id])`,
        [this.deps.afterMs],
      );
      const ids = rows.map((r) => Number(r.register_id));
      if (ids.length === 0) return finished;
      // The readings table first, then the versions table (no version of these registers is
      // made once the readings table holds none of their rows).
      for (const target of this.targets) {
        const months = await questdb(
          `SELECT cast(${target.ts} AS long) FROM (SELECT ${target.ts}, count() FROM ${target.table} WHERE register_id IN (${ids.map((id) => `'${id}'`).join(', ')}) SAMPLE BY 1M ALIGN TO CALENDAR)`,
        );
        if (months.length === 0) continue;
        await this.purgePartition(client, target, monthOf((months[0]![0] as number) / 1000), ids);
        return finished + 1;
      }
      await client.query('DELETE FROM timeseries_tombstones WHERE register_id = ANY($1)', [ids]);
      this.deps.log.info({ registers: ids.length }, 'QuestDB purge: deleted registers have no rows left; tombstones dropped');
      return finished + ids.length;
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      // Destroying the session releases its locks too.
      if (!broken) await client.query('SELECT pg_advisory_unlock_all()').catch(() => (broken = true));
      client.release(broken);
    }
  }

  /** Finishes the interrupted purges of the table on `client`'s session, taking the purger lock
   * unless the session holds it. A write that finds its month held calls this. */
  async finishInterrupted(client: PoolClient): Promise<number> {
    await client.query('SELECT pg_advisory_lock($1, 0)', [LOCKS.purger]);
    try {
      return await this.finish(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, 0)', [LOCKS.purger]);
    }
  }

  private async finish(client: PoolClient): Promise<number> {
    const { rows } = await client.query<{ table_name: string; partition: string; scratch: string; kept: number }>(
      'SELECT table_name, partition, scratch, kept FROM timeseries_purges WHERE table_name = ANY($1) ORDER BY table_name, partition',
      [this.targets.map((t) => t.table)],
    );
    for (const { table_name: table, ...record } of rows) {
      this.deps.log.warn({ table, partition: record.partition }, 'QuestDB purge: finishing an interrupted purge');
      const target = this.target(table);
      await this.exclusively(client, target, monthOfName(record.partition), () => this.restore(client, { table, ...record }));
    }
    return rows.length;
  }

  /** Runs `work` while no write can enter the target's month (nor, for the readings table, a
   * write of more than MAX_PARTITION_LOCKS months). */
  private async exclusively<T>(client: PoolClient, target: PurgeTarget, month: number, work: () => Promise<T>): Promise<T> {
    const keys = target.wide ? [WIDE, month] : [month];
    await client.query('SELECT pg_advisory_lock($1, k) FROM unnest($2::int[]) AS k', [target.lock, keys]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, k) FROM unnest($2::int[]) AS k', [target.lock, keys]);
    }
  }

  private async purgePartition(client: PoolClient, target: PurgeTarget, month: number, ids: readonly number[]): Promise<void> {
    const { questdb, applied, checkpoint } = this.deps;
    const { table, ts } = target;
    const partition = partitionName(month);
    // Scratch names of the two tables differ also when their names are cut.
    const scratch = `${this.deps.table.slice(0, 100)}_${table === this.deps.table ? '' : 'v'}purge_${partition.replace('-', '_')}`;
    await this.exclusively(client, target, month, async () => {
      await applied();
      await questdb(`DROP TABLE IF EXISTS ${scratch}`);
      const span = `${ts} >= ${literal(monthStart(month))} AND ${ts} < ${literal(monthStart(month + 1))}`;
      const keep = `${span} AND register_id NOT IN (${ids.map((id) => `'${id}'`).join(', ')})`;
      await questdb(`CREATE TABLE ${scratch} AS (SELECT * FROM ${table} WHERE ${keep}) TIMESTAMP(${ts}) PARTITION BY MONTH BYPASS WAL`);
      const copied = Number((await questdb(`SELECT count() FROM ${scratch}`))[0]![0]);
      const expected = Number((await questdb(`SELECT count() FROM ${table} WHERE ${keep}`))[0]![0]);
      if (copied !== expected) {
        await questdb(`DROP TABLE IF EXISTS ${scratch}`);
        throw new Error(`QuestDB purge of ${partition}: copied ${copied} rows of ${expected}; nothing dropped`);
      }
      checkpoint?.('copied');
      await client.query('INSERT INTO timeseries_purges (table_name, partition, scratch, register_ids, kept) VALUES ($1, $2, $3, $4, $5)', [table, partition, scratch, ids, copied]);
      checkpoint?.('recorded');
      await this.restore(client, { table, partition, scratch, kept: copied });
      this.deps.log.info({ table, partition, kept: copied, registers: ids.length }, 'QuestDB purge: partition rewritten without deleted registers');
    });
  }

  /** Step 4 (repeatable): the partition becomes exactly the verified copy. */
  private async restore(client: PoolClient, record: PurgeRecord): Promise<void> {
    const { questdb, applied, checkpoint } = this.deps;
    const { table } = record;
    const { ts } = this.target(table);
    const month = monthOfName(record.partition);
    await questdb(`ALTER TABLE ${table} DROP PARTITION LIST '${record.partition}'`);
    await applied();
    checkpoint?.('dropped');
    if (record.kept > 0) {
      await questdb(`INSERT INTO ${table} SELECT * FROM ${record.scratch}`);
      await applied();
    }
    checkpoint?.('inserted');
    const now = Number((await questdb(`SELECT count() FROM ${table} WHERE ${ts} >= ${literal(monthStart(month))} AND ${ts} < ${literal(monthStart(month + 1))}`))[0]![0]);
    if (now !== Number(record.kept)) throw new Error(`QuestDB purge of ${record.partition}: ${now} rows after the rewrite, ${record.kept} expected; retried at the next step`);
    await client.query('DELETE FROM timeseries_purges WHERE table_name = $1 AND partition = $2', [table, record.partition]);
    await questdb(`DROP TABLE IF EXISTS ${record.scratch}`);
  }
}
