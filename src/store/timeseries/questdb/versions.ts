// Superseded reading versions on the QuestDB store: the versions table beside the readings table,
// what a write copies into it, and the retention of what it holds. docs/questdb.md ("Versions")
// has the design and its guarantees.
//
// The readings table keeps only the current version of each (register, timestamp), as before
// (DEDUP UPSERT: reads of current data cost what they did). Before a batch is sent, the stored
// rows it is about to replace are copied, inside QuestDB (INSERT … SELECT), into
// `<table>_versions` with `superseded_at` = the batch's recordedAt; a version's `recorded_at` is
// the `updated_at` it had. The versions table's designated timestamp is `superseded_at`
// (PARTITION BY MONTH), so an `asOf` read scans only the months superseded after its instant,
// and the retention of superseded versions drops whole months.
import type { Logger } from 'pino';
import type { Pool } from '../../database.ts';
import type { ReadingRows } from '../types.ts';
import { LOCKS, monthOf, partitionName } from './purge.ts';

/** The versions table of a readings table. */
export const versionsTableOf = (table: string) => `${table}_versions`;

/** No DEDUP: QuestDB sorts a deduplicated transaction's rows by its keys when it applies them,
 * which cost as much again as the copy itself (1M rows: ~2 s more; docs/benchmarks-questdb.md).
 * A copy is made once instead: a replay looks before copying again (copyStatements). */
export const createVersionsTable = (table: string) => `CREATE TABLE IF NOT EXISTS ${versionsTableOf(table)} (
  register_id SYMBOL CAPACITY 100000 INDEX, reading_ts TIMESTAMP, value DOUBLE, resolution INT, recorded_at TIMESTAMP, superseded_at TIMESTAMP
) TIMESTAMP(superseded_at) PARTITION BY MONTH WAL`;

/** The conditions of one copy statement at most (an OR QuestDB evaluates row by row), and the
 * timestamps listed in it at most. */
const MAX_CONDITIONS = 32;
const MAX_POINTS = 5_000;
/** Runs of at least this many evenly spaced readings become a range condition. */
const MIN_RUN = 3;
/** Readings of a run above which its stored rows are read in two queries at once. */
const SPLIT_READINGS = 100_000;

const micros = (ms: number) => Math.round(ms * 1000);
const symbols = (ids: readonly number[]) => ids.map((id) => `'${Number(id)}'`).join(', ');

/** A set of (register, timestamp) keys: an evenly spaced run over registers, or listed times. */
export interface KeySet {
  registers: number[];
  /** UTC ms, inclusive. */
  first: number;
  last: number;
  /** A run: every `step` ms from `first` to `last`. */
  step?: number;
  /** Listed: these timestamps (of the one register). */
  stamps?: number[];
}

/**
 * The (register, timestamp) keys of a batch, exactly: evenly spaced runs of a series (meter data:
 * nearly always the whole series) as a range and a step, runs that share range and step over one
 * register list; the readings outside such runs listed by timestamp, per register, at most
 * MAX_POINTS a set.
 */
export function keySets(rows: ReadingRows): KeySet[] {
  const runs = new Map<string, KeySet>();
  const points = new Map<number, number[]>();
  const { offsets, timestamps } = rows;
  for (let s = 0; s + 1 < offsets.length; s += 1) {
    const registerId = Number(rows.registerIds[s]);
    const b = offsets[s + 1]!;
    let i = offsets[s]!;
    while (i < b) {
      let j = i;
      const step = i + 1 < b ? timestamps[i + 1]! - timestamps[i]! : 0;
      while (j + 1 < b && timestamps[j + 1]! - timestamps[j]! === step) j += 1;
      if (j - i + 1 >= MIN_RUN) {
        const key = `${timestamps[i]}:${timestamps[j]}:${step}`;
        const run = runs.get(key) ?? runs.set(key, { first: timestamps[i]!, last: timestamps[j]!, step, registers: [] }).get(key)!;
        run.registers.push(registerId);
        i = j + 1;
      } else {
        (points.get(registerId) ?? points.set(registerId, []).get(registerId)!).push(timestamps[i]!);
        i += 1;
      }
    }
  }
  const out = [...runs.values()];
  for (const [registerId, stamps] of points) {
    for (let k = 0; k < stamps.length; k += MAX_POINTS) {
      const some = stamps.slice(k, k + MAX_POINTS);
      out.push({ registers: [registerId], first: some[0]!, last: some[some.length - 1]!, stamps: some });
    }
  }
  return out;
}

/** A key set as a condition on a table whose reading time is `ts`. */
function condition(set: KeySet, ts: string): string {
  if (set.stamps) return `register_id = '${Number(set.registers[0])}' AND cast(${ts} AS long) IN (${set.stamps.map(micros).join(', ')})`;
  return `register_id IN (${symbols(set.registers)}) AND ${ts} >= ${micros(set.first)} AND ${ts} <= ${micros(set.last)} AND (cast(${ts} AS long) - ${micros(set.first)}) % ${micros(set.step!)} = 0`;
}

/** Groups of key sets, each one statement's (at most MAX_CONDITIONS sets, MAX_POINTS listed
 * times), as its condition on a table whose reading time is `ts`. */
function groupedConditions(rows: ReadingRows, split = false): ((ts: string) => string)[] {
  const sets = split ? keySets(rows).flatMap(halves) : keySets(rows);
  const out: ((ts: string) => string)[] = [];
  for (let k = 0; k < sets.length; ) {
    const group: KeySet[] = [];
    let points = 0;
    while (k < sets.length && group.length < MAX_CONDITIONS && (group.length === 0 || points + (sets[k]!.stamps?.length ?? 0) <= MAX_POINTS)) {
      points += sets[k]!.stamps?.length ?? 0;
      group.push(sets[k++]!);
    }
    out.push((ts) =>
      group.length === 1
        ? condition(group[0]!, ts)
        : `register_id IN (${symbols([...new Set(group.flatMap((c) => c.registers))])}) AND ${ts} >= ${micros(Math.min(...group.map((c) => c.first)))} AND ${ts} <= ${micros(Math.max(...group.map((c) => c.last)))} AND (${group.map((c) => `(${condition(c, ts)})`).join(' OR ')})`,
    );
  }
  return out;
}

/** A run over registers of many readings, as two runs over half the registers each. */
function halves(set: KeySet): KeySet[] {
  if (set.stamps || set.registers.length < 2 || set.registers.length * ((set.last - set.first) / set.step! + 1) < SPLIT_READINGS) return [set];
  const mid = Math.ceil(set.registers.length / 2);
  return [
    { ...set, registers: set.registers.slice(0, mid) },
    { ...set, registers: set.registers.slice(mid) },
  ];
}

/** The queries reading the stored rows of a batch's keys: register_id, ts (µs), value, resolution.
 * A run of many readings is read in two queries (run at once, they took 0.6–2.0 s for 1M rows
 * where one took 1.9–2.4 s: docs/benchmarks-questdb.md). */
export function storedStatements(rows: ReadingRows, table: string): string[] {
  return groupedConditions(rows, true).map((where) => `SELECT register_id, cast(ts AS long), value, resolution FROM ${table} WHERE ${where('ts')}`);
}

/** What each row of a batch does to the stored readings: NEW (none stored), SAME (stored with
 * the same value and resolution: posted again unchanged, it keeps its version and updatedAt) or
 * CHANGED (a new version). */
export const NEW = 0;
export const SAME = 1;
export const CHANGED = 2;

/** Row states of a batch, filled from the stored rows of its keys (store(): each stored row). */
export function rowStates(rows: ReadingRows): { states: Uint8Array; stored(registerId: number, ms: number, value: number, resolution: number): void } {
  const states = new Uint8Array(rows.timestamps.length);
  const seriesOf = new Map<number, number[]>();
  for (let s = 0; s + 1 < rows.offsets.length; s += 1) {
    const id = Number(rows.registerIds[s]);
    (seriesOf.get(id) ?? seriesOf.set(id, []).get(id)!).push(s);
  }
  return {
    states,
    stored(registerId, ms, value, resolution) {
      for (const s of seriesOf.get(registerId) ?? []) {
        // Binary search of the series' timestamps (sorted).
        let lo = rows.offsets[s]!;
        let hi = rows.offsets[s + 1]! - 1;
        while (lo <= hi) {
          const mid = (lo + hi) >>> 1;
          const t = rows.timestamps[mid]!;
          if (t < ms) lo = mid + 1;
          else if (t > ms) hi = mid - 1;
          else {
            states[mid] = Object.is(rows.values[mid], value) && rows.resolutions[mid] === resolution ? SAME : CHANGED;
            return;
          }
        }
      }
    },
  };
}

/** The rows of a batch whose state is among `keep`, as a batch of their own (empty series kept). */
export function rowsWhere(rows: ReadingRows, states: Uint8Array, keep: (state: number) => boolean): ReadingRows {
  let n = 0;
  for (let i = 0; i < states.length; i += 1) if (keep(states[i]!)) n += 1;
  const out: ReadingRows = { registerIds: rows.registerIds, offsets: new Int32Array(rows.offsets.length), timestamps: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n) };
  let at = 0;
  for (let s = 0; s + 1 < rows.offsets.length; s += 1) {
    for (let i = rows.offsets[s]!; i < rows.offsets[s + 1]!; i += 1) {
      if (!keep(states[i]!)) continue;
      out.timestamps[at] = rows.timestamps[i]!;
      out.values[at] = rows.values[i]!;
      out.resolutions[at] = rows.resolutions[i]!;
      at += 1;
    }
    out.offsets[s + 1] = at;
  }
  return out;
}

/** One statement copying replaced rows, and the query that tells whether it ran already. */
export interface CopyStatement {
  copy: string;
  /** Rows of this copy already in the versions table (a replay after a crash between the copy and
   * the journal's note of it). */
  done: string;
}

/**
 * The statements that copy the stored rows a batch replaces into the versions table, superseded
 * at `recordedAtMs`. Each selects by an interval and the registers' index, then the exact keys
 * (keySets); each is one QuestDB transaction. Literals only (numbers we write): QuestDB 7.4
 * runs no INSERT … SELECT sent with bind parameters over its PostgreSQL wire (it answers, and
 * inserts nothing).
 */
export function copyStatements(rows: ReadingRows, table: string, recordedAtMs: number): CopyStatement[] {
  const superseded = micros(recordedAtMs);
  return groupedConditions(rows).map((where) => ({
    copy: `INSERT INTO ${versionsTableOf(table)} SELECT * FROM (
         SELECT register_id, ts AS reading_ts, value, resolution, updated_at AS recorded_at, cast(${superseded} AS timestamp) AS superseded_at
         FROM ${table} WHERE ${where('ts')}) timestamp(superseded_at)`,
    done: `SELECT count() FROM ${versionsTableOf(table)} WHERE superseded_at = ${superseded} AND ${where('reading_ts')}`,
  }));
}

/** READING_VERSIONS_RETENTION as the platform reads it: versions superseded before `cutoff(now)`
 * (UTC ms; -Infinity: kept forever) may go. */
export interface VersionsRetention {
  cutoff(now: number): number;
}

export interface RetentionDeps {
  pool: Pool;
  table: string;
  /** Versions superseded before this instant (UTC ms) may go. */
  cutoff: number;
  questdb: (sql: string) => Promise<unknown[][]>;
  /** Waits until QuestDB has applied every transaction of the store's tables. */
  applied: () => Promise<void>;
  log: Logger;
}

/**
 * One retention step: drops the versions table's months that lie wholly before the cutoff (a
 * version is kept until the month it was superseded in is past the limit: up to a month longer).
 * Runs under the purger's lock, so it never drops a month a purge is rewriting. Returns the
 * months dropped.
 */
export async function dropExpiredVersions(deps: RetentionDeps): Promise<number> {
  if (!Number.isFinite(deps.cutoff)) return 0;
  const cutoff = monthOf(deps.cutoff);
  const client = await deps.pool.connect();
  let broken = false;
  try {
    const { rows: got } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, 0) AS got', [LOCKS.purger]);
    if (!got[0]!.got) return 0;
    try {
      const { rows: purging } = await client.query<{ partition: string }>('SELECT partition FROM timeseries_purges WHERE table_name = $1', [versionsTableOf(deps.table)]);
      const busy = new Set(purging.map((p) => p.partition));
      const partitions = (await deps.questdb(`SELECT name FROM table_partitions('${versionsTableOf(deps.table)}')`)).map((r) => String(r[0]));
      const expired = partitions.filter((name) => /^\d{4}-\d{2}$/.test(name) && monthOfName(name) < cutoff && !busy.has(name));
      if (expired.length === 0) return 0;
      await deps.questdb(`ALTER TABLE ${versionsTableOf(deps.table)} DROP PARTITION LIST ${expired.map((name) => `'${name}'`).join(', ')}`);
      await deps.applied();
      deps.log.info({ months: expired, before: partitionName(cutoff) }, 'QuestDB: superseded reading versions past their retention dropped');
      return expired.length;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, 0)', [LOCKS.purger]);
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    client.release(broken);
  }
}

const monthOfName = (name: string) => Number(name.slice(0, 4)) * 12 + Number(name.slice(5, 7)) - 1;
