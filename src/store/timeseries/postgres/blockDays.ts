// Daily pieces of register-day blocks at local midnight of each register's time zone (`days`;
// format in src/shared/readings/blocks.ts, docs/meter-data.md). Computed
//   - on every write, for the blocks it writes (blockWrite.ts), in its transaction, with the
//     registers' zones read FOR SHARE so that a zone change waits for it (and it for the change);
//   - again for all blocks of a register in the transaction that changes its zone (rebuildDays,
//     called by PUT /api/admin/registers/:id through the store);
//   - when stored blocks are converted to the compact encoding (convertBlocks.ts).
// Readers check every piece against the zone's local days as PostgreSQL computes them at read
// time, so correctness never depends on these being current: a piece that no longer fits one
// local day sends the reader to the block's readings.
// Lock order everywhere: register rows, then blocks in (register, day) order.
import type { Queryable } from '../../database.ts';
import { DAY_MS, decodeData, encodeDays } from '../../../shared/readings/blocks.ts';
import { localDays } from './blockRead.ts';

/** Local midnights inside a UTC day (ms since it began) for a register; undefined when the
 * register or its zone is unknown (its blocks keep k = 0). */
export type DayCuts = (registerId: number, day: number) => readonly number[] | undefined;

const NONE: readonly number[] = [];

/** The registers' zones, their rows locked FOR SHARE until the transaction ends (a zone change
 * locks them FOR UPDATE), in id order. */
export async function lockedZones(db: Queryable, registerIds: readonly number[]): Promise<Map<number, string>> {
  const { rows } = await db.query<{ id: number; tz: string }>('SELECT id, time_zone AS tz FROM registers WHERE id = ANY($1::int[]) ORDER BY id FOR SHARE', [registerIds]);
  return new Map(rows.map((r) => [r.id, r.tz]));
}

/** The local midnights of these registers' zones inside UTC days [firstDay, lastDay], as
 * PostgreSQL computes local days for the questions (blockRead.ts localDays). */
export async function dayCuts(db: Queryable, zones: ReadonlyMap<number, string>, firstDay: number, lastDay: number): Promise<DayCuts> {
  if (zones.size === 0) return () => undefined;
  const days = await localDays(db, [...new Set(zones.values())], firstDay * DAY_MS, (lastDay + 1) * DAY_MS, true);
  const byZone = new Map<string, Map<number, number[]>>();
  for (const [tz, { starts }] of days) {
    const cuts = new Map<number, number[]>();
    for (const start of starts) {
      const day = Math.floor(start / DAY_MS);
      const offset = start - day * DAY_MS;
      if (offset === 0) continue;
      const list = cuts.get(day);
      if (list) list.push(offset);
      else cuts.set(day, [offset]);
    }
    byZone.set(tz, cuts);
  }
  return (id, day) => {
    const tz = zones.get(id);
    const cuts = tz === undefined ? undefined : byZone.get(tz);
    return cuts === undefined ? undefined : (cuts.get(day) ?? NONE);
  };
}

const CHUNK = 2000;
const BLOCKS_SQL = `SELECT register_id AS id, day, data, updated_max FROM reading_blocks
  WHERE register_id = ANY($1::int[]) AND (register_id, day) > ($2, $3) ORDER BY register_id, day LIMIT ${CHUNK} FOR UPDATE`;
const UPDATE_SQL = 'UPDATE reading_blocks b SET days = u.days FROM unnest($1::int[], $2::int[], $3::bytea[]) AS u(id, day, days) WHERE b.register_id = u.id AND b.day = u.day';

/** Recomputes `days` of every block of these registers, in the caller's transaction (zones
 * locked first); returns the blocks written. */
export async function recompute(tx: Queryable, registerIds: readonly number[]): Promise<number> {
  const zones = await lockedZones(tx, registerIds);
  let written = 0;
  let after: [number, number] = [-1, 0];
  for (;;) {
    const { rows } = await tx.query<{ id: number; day: number; data: Buffer; updated_max: number }>(BLOCKS_SQL, [registerIds, ...after]);
    if (rows.length === 0) return written;
    const last = rows[rows.length - 1]!;
    after = [last.id, last.day];
    const cuts = await dayCuts(tx, zones, Math.min(...rows.map((r) => r.day)), Math.max(...rows.map((r) => r.day)));
    const update: [number[], number[], Buffer[]] = [[], [], []];
    for (const r of rows) {
      const c = cuts(r.id, r.day);
      if (!c) continue;
      const readings = decodeData(r.data, r.day);
      const days = encodeDays(r.day, readings, readings.digits, c, r.updated_max);
      update[0].push(r.id);
      update[1].push(r.day);
      update[2].push(Buffer.from(days.buffer, days.byteOffset, days.byteLength));
    }
    if (update[0].length > 0) await tx.query(UPDATE_SQL, update);
    written += update[0].length;
  }
}

/** After a register's zone changed, in the same transaction: its blocks' daily pieces for the new zone. */
export async function rebuildDays(tx: Queryable, registerId: number): Promise<void> {
  await recompute(tx, [registerId]);
}
