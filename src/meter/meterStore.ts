// SQL for meters (shared by organizations) and their registers with virtual definitions.
// Rows come back shaped as API objects.
import { HttpError, badRequest, conflict } from '../http/errors.ts';
import { rowReader, withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import type { Meter, Register, VirtualDefinition } from './meterTypes.ts';

export type { Meter, Register, VirtualDefinition };

export type MeterInput = Omit<Meter, 'id'>;
export type VirtualDefinitionInput = Omit<VirtualDefinition, 'id'>;
export type RegisterInput = Omit<Register, 'id' | 'virtualDefinition'> & { virtualDefinition: VirtualDefinitionInput | null };

/** A register as the read path needs it, with the parsed expression. */
export interface RegisterForRead extends Register {
  expressionAst: unknown;
}

const METER_COLUMNS = `m.id, m.external_id AS "externalId", m.name, m.type, m.longitude, m.latitude,
  coalesce((SELECT array_agg(organization_id ORDER BY organization_id) FROM meter_organizations WHERE meter_id = m.id), '{}') AS "organizationsIds"`;

const REGISTER_COLUMNS = `r.id, r.external_id AS "externalId", r.name, r.type, r.measurement_type AS "measurementType",
  r.measurement_prefix AS "measurementPrefix", r.default_resolution AS "defaultResolution", r.update_frequency AS "updateFrequency",
  r.is_virtual AS "isVirtual", r.meter_id AS "meterId", r.time_zone AS "timeZone",
  CASE WHEN v.id IS NULL THEN NULL ELSE json_build_object(
    'id', v.id, 'calculationType', v.calculation_type, 'baselineAlgorithmType', v.baseline_algorithm_type, 'timeZone', v.time_zone,
    'constant', v.constant, 'sumPreviousValues', v.sum_previous_values, 'expression', v.expression,
    'timeOfDay', to_char(v.time_of_day, 'HH24:MI:SS'), 'sourceRegisters', v.source_registers) END AS "virtualDefinition"`;

const REGISTER_FROM = 'registers r LEFT JOIN virtual_definitions v ON v.register_id = r.id';

// Meters -----------------------------------------------------------------------------------

const metersReader = rowReader<Meter>(`SELECT ${METER_COLUMNS} FROM meters m`, 'm');
export const listMeters = metersReader.list;
export const getMeter = metersReader.get;

async function assertOrganizationsExist(db: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const { rows } = await db.query<{ id: number }>('SELECT id FROM organizations WHERE id = ANY($1::int[])', [ids]);
  const known = new Set(rows.map((r) => r.id));
  const errors = ids.flatMap((id, i) => (known.has(id) ? [] : [{ path: `organizationsIds[${i}]`, message: `organization ${id} does not exist` }]));
  if (errors.length > 0) throw badRequest('Unknown organization', errors);
}

async function setMeterOrganizations(tx: PoolClient, meterId: number, organizationIds: readonly number[]): Promise<void> {
  await tx.query('DELETE FROM meter_organizations WHERE meter_id = $1', [meterId]);
  await tx.query('INSERT INTO meter_organizations (meter_id, organization_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [meterId, organizationIds]);
}

export async function createMeter(pool: Pool, input: MeterInput): Promise<Meter> {
  await assertOrganizationsExist(pool, input.organizationsIds);
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO meters (external_id, name, type, longitude, latitude) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
      input.externalId,
      input.name,
      input.type,
      input.longitude,
      input.latitude,
    ]);
    await setMeterOrganizations(tx, rows[0]!.id, input.organizationsIds);
    return (await getMeter(tx, rows[0]!.id))!;
  });
}

export async function updateMeter(pool: Pool, id: number, input: MeterInput): Promise<Meter | undefined> {
  await assertOrganizationsExist(pool, input.organizationsIds);
  return withTransaction(pool, async (tx) => {
    const { rowCount } = await tx.query('UPDATE meters SET external_id = $2, name = $3, type = $4, longitude = $5, latitude = $6, updated_at = now() WHERE id = $1', [
      id,
      input.externalId,
      input.name,
      input.type,
      input.longitude,
      input.latitude,
    ]);
    if (rowCount === 0) return undefined;
    await setMeterOrganizations(tx, id, input.organizationsIds);
    return getMeter(tx, id);
  });
}

export async function deleteMeter(db: Queryable, id: number): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM registers WHERE meter_id = $1', [id]);
  if (rows[0]!.n > 0) throw conflict(`Meter ${id} still has ${rows[0]!.n} register(s); delete them first`);
  const { rowCount } = await db.query('DELETE FROM meters WHERE id = $1', [id]);
  return rowCount === 1;
}

/** Meters and registers an organization sees (all of them for a global administrator). */
export async function metersOfOrganization(db: Queryable, organizationId: number | undefined): Promise<{ meters: Meter[]; registers: Register[] }> {
  const filter = organizationId === undefined ? '' : 'WHERE EXISTS (SELECT 1 FROM meter_organizations mo WHERE mo.meter_id = m.id AND mo.organization_id = $1)';
  const params = organizationId === undefined ? [] : [organizationId];
  const meters = await db.query<Meter>(`SELECT ${METER_COLUMNS} FROM meters m ${filter} ORDER BY m.id`, params);
  const registers = await db.query<Register>(
    `SELECT ${REGISTER_COLUMNS} FROM ${REGISTER_FROM} JOIN meters m ON m.id = r.meter_id ${filter} ORDER BY r.id`,
    params,
  );
  return { meters: meters.rows, registers: registers.rows };
}

// Registers --------------------------------------------------------------------------------

const registersReader = rowReader<Register>(`SELECT ${REGISTER_COLUMNS} FROM ${REGISTER_FROM}`, 'r');
export const listRegisters = registersReader.list;
export const getRegister = registersReader.get;

/** Registers with what reads need (parsed expression), in the order asked; missing ids omitted. */
export async function registersForRead(db: Queryable, ids: readonly number[]): Promise<RegisterForRead[]> {
  const { rows } = await db.query<RegisterForRead>(`SELECT ${REGISTER_COLUMNS}, v.expression_ast AS "expressionAst" FROM ${REGISTER_FROM} WHERE r.id = ANY($1::int[])`, [ids]);
  return rows;
}

/** Whether each of the registers is virtual (computed on read), for the domains that refer to
 * registers; ids of no register are absent. */
export async function virtualByRegister(db: Queryable, ids: readonly number[]): Promise<Map<number, boolean>> {
  const { rows } = await db.query<{ id: number; is_virtual: boolean }>('SELECT id, is_virtual FROM registers WHERE id = ANY($1::int[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.is_virtual]));
}

/** registersForRead, each with whether its meter is shared with the organization (one query). */
export async function registersForReadBy(db: Queryable, ids: readonly number[], organizationId: number): Promise<(RegisterForRead & { accessible: boolean })[]> {
  const { rows } = await db.query<RegisterForRead & { accessible: boolean }>(
    `SELECT ${REGISTER_COLUMNS}, v.expression_ast AS "expressionAst",
       EXISTS (SELECT 1 FROM meter_organizations mo WHERE mo.meter_id = r.meter_id AND mo.organization_id = $2) AS accessible
     FROM ${REGISTER_FROM} WHERE r.id = ANY($1::int[])`,
    [ids, organizationId],
  );
  return rows;
}

async function writeVirtualDefinition(tx: PoolClient, registerId: number, def: VirtualDefinitionInput | null, ast: unknown): Promise<void> {
  await tx.query('DELETE FROM virtual_definitions WHERE register_id = $1', [registerId]);
  if (!def) return;
  await tx.query(
    `INSERT INTO virtual_definitions (register_id, calculation_type, baseline_algorithm_type, time_zone, constant, sum_previous_values, expression, expression_ast, time_of_day, source_registers)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [registerId, def.calculationType, def.baselineAlgorithmType, def.timeZone, def.constant, def.sumPreviousValues, def.expression, ast === undefined ? null : JSON.stringify(ast), def.timeOfDay, def.sourceRegisters],
  );
}

export async function insertRegister(pool: Pool, input: RegisterInput, ast: unknown): Promise<Register> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO registers (meter_id, external_id, name, type, measurement_type, measurement_prefix, default_resolution, update_frequency, is_virtual, time_zone)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [input.meterId, input.externalId, input.name, input.type, input.measurementType, input.measurementPrefix, input.defaultResolution, input.updateFrequency, input.isVirtual, input.timeZone],
    );
    await writeVirtualDefinition(tx, rows[0]!.id, input.virtualDefinition, ast);
    return (await getRegister(tx, rows[0]!.id))!;
  });
}

/** `timeZoneChanged` runs in the same transaction when the register's zone changes (the
 * time-series store's daily rollups follow the zone). */
export async function replaceRegister(pool: Pool, id: number, input: RegisterInput, ast: unknown, timeZoneChanged?: (tx: PoolClient, id: number) => Promise<void>): Promise<Register | undefined> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ is_virtual: boolean; time_zone: string }>('SELECT is_virtual, time_zone FROM registers WHERE id = $1 FOR UPDATE', [id]);
    if (!rows[0]) return undefined;
    await tx.query(
      `UPDATE registers SET meter_id = $2, external_id = $3, name = $4, type = $5, measurement_type = $6, measurement_prefix = $7,
         default_resolution = $8, update_frequency = $9, is_virtual = $10, time_zone = $11, updated_at = now() WHERE id = $1`,
      [id, input.meterId, input.externalId, input.name, input.type, input.measurementType, input.measurementPrefix, input.defaultResolution, input.updateFrequency, input.isVirtual, input.timeZone],
    );
    await writeVirtualDefinition(tx, id, input.virtualDefinition, ast);
    if (timeZoneChanged && rows[0].time_zone !== input.timeZone) await timeZoneChanged(tx, id);
    return getRegister(tx, id);
  });
}

/** Deletes the register (its readings are the time-series store's to delete); refused while a
 * virtual register uses it (grid resources refer to it by foreign key: 409 as well). */
export async function deleteRegister(pool: Pool, id: number): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const { rows: users } = await tx.query<{ register_id: number }>('SELECT register_id FROM virtual_definitions WHERE $1 = ANY(source_registers)', [id]);
    if (users.length > 0) throw conflict(`Register ${id} is a source of virtual register(s) ${users.map((u) => u.register_id).join(', ')}`);
    const { rowCount } = await tx.query('DELETE FROM registers WHERE id = $1', [id]);
    return rowCount === 1;
  });
}

/** Source registers: they must exist, and following them must never lead back to `selfId`. */
export async function assertSourcesAcyclic(db: Queryable, selfId: number | undefined, sources: readonly number[]): Promise<void> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM registers WHERE id = ANY($1::int[])', [sources]);
  const known = new Set(rows.map((r) => r.id));
  const errors = sources.flatMap((id, i) => (known.has(id) ? [] : [{ path: `virtualDefinition.sourceRegisters[${i}]`, message: `register ${id} does not exist` }]));
  if (errors.length > 0) throw badRequest('Unknown source register', errors);
  if (selfId === undefined) return;
  const { rows: cycle } = await db.query(
    `WITH RECURSIVE reach(id, depth) AS (
       SELECT unnest($1::int[]), 1
       UNION
       SELECT unnest(v.source_registers), reach.depth + 1 FROM reach JOIN virtual_definitions v ON v.register_id = reach.id WHERE reach.depth < 20
     ) SELECT 1 FROM reach WHERE id = $2 LIMIT 1`,
    [sources, selfId],
  );
  if (cycle.length > 0) throw new HttpError('validation_failed', 'The source registers lead back to this register', { errors: [{ path: 'virtualDefinition.sourceRegisters', message: 'would make a cycle' }] });
}

// Event days (baseline exclusions) ---------------------------------------------------------

export async function getEventDays(db: Queryable, registerId: number): Promise<string[]> {
  const { rows } = await db.query<{ day: string }>("SELECT to_char(day, 'YYYY-MM-DD') AS day FROM register_event_days WHERE register_id = $1 ORDER BY day", [registerId]);
  return rows.map((r) => r.day);
}

export async function setEventDays(pool: Pool, registerId: number, days: readonly string[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('DELETE FROM register_event_days WHERE register_id = $1', [registerId]);
    await tx.query('INSERT INTO register_event_days (register_id, day) SELECT $1, unnest($2::date[]) ON CONFLICT DO NOTHING', [registerId, days]);
  });
}

/** Marks days as event days (used by the products domain when a delivery is activated), and
 * records the event's period when it is known: baselines compare and adjust the day by it. */
export async function addEventDays(db: Queryable, registerId: number, days: readonly string[], period?: { start: Date; end: Date }): Promise<void> {
  await db.query('INSERT INTO register_event_days (register_id, day) SELECT $1, unnest($2::date[]) ON CONFLICT DO NOTHING', [registerId, days]);
  if (period) await db.query('INSERT INTO register_event_periods (register_id, starts_at, ends_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [registerId, period.start, period.end]);
}

export async function eventDaysBetween(db: Queryable, registerId: number, from: string, to: string): Promise<string[]> {
  const { rows } = await db.query<{ day: string }>(
    "SELECT to_char(day, 'YYYY-MM-DD') AS day FROM register_event_days WHERE register_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day",
    [registerId, from, to],
  );
  return rows.map((r) => r.day);
}

export interface EventPeriodRow {
  start: Date;
  end: Date;
}

export async function getEventPeriods(db: Queryable, registerId: number): Promise<EventPeriodRow[]> {
  const { rows } = await db.query<EventPeriodRow>('SELECT starts_at AS start, ends_at AS "end" FROM register_event_periods WHERE register_id = $1 ORDER BY starts_at, ends_at', [registerId]);
  return rows;
}

export async function setEventPeriods(pool: Pool, registerId: number, periods: readonly { start: string; end: string }[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('DELETE FROM register_event_periods WHERE register_id = $1', [registerId]);
    await tx.query(
      'INSERT INTO register_event_periods (register_id, starts_at, ends_at) SELECT $1, s, e FROM unnest($2::timestamptz[], $3::timestamptz[]) AS p(s, e) ON CONFLICT DO NOTHING',
      [registerId, periods.map((p) => p.start), periods.map((p) => p.end)],
    );
  });
}

/** Event periods that overlap [from, to) (UTC ms), as the baseline computation takes them. */
export async function eventPeriodsBetween(db: Queryable, registerId: number, from: number, to: number): Promise<{ start: number; end: number }[]> {
  const { rows } = await db.query<EventPeriodRow>(
    'SELECT starts_at AS start, ends_at AS "end" FROM register_event_periods WHERE register_id = $1 AND starts_at < $3 AND ends_at > $2 ORDER BY starts_at',
    [registerId, new Date(from), new Date(to)],
  );
  return rows.map((r) => ({ start: r.start.getTime(), end: r.end.getTime() }));
}

// Holidays (of a baseline register) ----------------------------------------------------------

export async function getHolidays(db: Queryable, registerId: number): Promise<string[]> {
  const { rows } = await db.query<{ day: string }>("SELECT to_char(day, 'YYYY-MM-DD') AS day FROM register_holidays WHERE register_id = $1 ORDER BY day", [registerId]);
  return rows.map((r) => r.day);
}

export async function setHolidays(pool: Pool, registerId: number, days: readonly string[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('DELETE FROM register_holidays WHERE register_id = $1', [registerId]);
    await tx.query('INSERT INTO register_holidays (register_id, day) SELECT $1, unnest($2::date[]) ON CONFLICT DO NOTHING', [registerId, days]);
  });
}

export async function holidaysBetween(db: Queryable, registerId: number, from: string, to: string): Promise<string[]> {
  const { rows } = await db.query<{ day: string }>(
    "SELECT to_char(day, 'YYYY-MM-DD') AS day FROM register_holidays WHERE register_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day",
    [registerId, from, to],
  );
  return rows.map((r) => r.day);
}
