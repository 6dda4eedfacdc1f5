// SQL for market zones (members, markets), substations (with resource impact factors) and the
// participants view. Rows come back shaped as the interface's objects.
import { badRequest, type FieldError } from '../http/errors.ts';
import { rowReader, withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';

export interface MarketZone {
  id: number;
  createdBy: string;
  createdAt: Date;
  name: string;
  timeResolution: number;
  orderQuantityResolution: number;
  organizationIds: number[];
  markets: { marketId: number; name: string }[];
}

export interface MarketZoneInput {
  name: string;
  timeResolution: number;
  orderQuantityResolution: number;
  organizationIds: number[];
  markets: { name: string }[];
}

export interface Substation {
  id: number;
  organizationId: number;
  marketZoneId: number;
  name: string;
  impacts: { resourceId: number; factor: number }[];
}

export type SubstationInput = Omit<Substation, 'id'>;

const ZONE_COLUMNS = `z.id, z.created_by AS "createdBy", z.created_at AS "createdAt", z.name, z.time_resolution AS "timeResolution",
  z.order_quantity_resolution::float8 AS "orderQuantityResolution",
  coalesce((SELECT array_agg(organization_id ORDER BY organization_id) FROM market_zone_organizations WHERE market_zone_id = z.id), '{}') AS "organizationIds",
  coalesce((SELECT json_agg(json_build_object('marketId', m.id, 'name', m.name) ORDER BY m.id) FROM markets m WHERE m.market_zone_id = z.id), '[]') AS markets`;

const zonesReader = rowReader<MarketZone>(`SELECT ${ZONE_COLUMNS} FROM market_zones z`, 'z');
export const listZones = zonesReader.list;
export const getZone = zonesReader.get;

/** Zones the organization belongs to (all zones when undefined). */
export async function zonesOf(db: Queryable, organizationId: number | undefined): Promise<MarketZone[]> {
  const { rows } = await db.query<MarketZone>(
    `SELECT ${ZONE_COLUMNS} FROM market_zones z
     WHERE $1::int IS NULL OR EXISTS (SELECT 1 FROM market_zone_organizations o WHERE o.market_zone_id = z.id AND o.organization_id = $1)
     ORDER BY z.id`,
    [organizationId ?? null],
  );
  return rows;
}

export async function isZoneMember(db: Queryable, zoneId: number, organizationId: number): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM market_zone_organizations WHERE market_zone_id = $1 AND organization_id = $2', [zoneId, organizationId]);
  return rowCount === 1;
}

async function assertOrganizations(db: Queryable, ids: readonly number[], path: string): Promise<void> {
  if (ids.length === 0) return;
  const { rows } = await db.query<{ id: number }>('SELECT id FROM organizations WHERE id = ANY($1::int[])', [ids]);
  const known = new Set(rows.map((r) => r.id));
  const errors: FieldError[] = ids.flatMap((id, i) => (known.has(id) ? [] : [{ path: `${path}[${i}]`, message: `organization ${id} does not exist` }]));
  if (errors.length > 0) throw badRequest('Unknown organization', errors);
}

async function writeZoneMembers(tx: PoolClient, zoneId: number, input: MarketZoneInput): Promise<void> {
  await tx.query('DELETE FROM market_zone_organizations WHERE market_zone_id = $1', [zoneId]);
  await tx.query('INSERT INTO market_zone_organizations (market_zone_id, organization_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [zoneId, input.organizationIds]);
  // Markets are matched by name so their ids stay stable; a market in use cannot be removed.
  const names = [...new Set(input.markets.map((m) => m.name))];
  await tx.query('INSERT INTO markets (market_zone_id, name) SELECT $1, unnest($2::text[]) ON CONFLICT (market_zone_id, name) DO NOTHING', [zoneId, names]);
  await tx.query('DELETE FROM markets WHERE market_zone_id = $1 AND NOT (name = ANY($2::text[]))', [zoneId, names]);
}

export async function createZone(pool: Pool, input: MarketZoneInput, createdBy: string): Promise<MarketZone> {
  await assertOrganizations(pool, input.organizationIds, 'organizationIds');
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO market_zones (name, time_resolution, order_quantity_resolution, created_by) VALUES ($1, $2, $3, $4) RETURNING id', [
      input.name,
      input.timeResolution,
      input.orderQuantityResolution,
      createdBy,
    ]);
    await writeZoneMembers(tx, rows[0]!.id, input);
    return (await getZone(tx, rows[0]!.id))!;
  });
}

export async function updateZone(pool: Pool, id: number, input: MarketZoneInput): Promise<MarketZone | undefined> {
  await assertOrganizations(pool, input.organizationIds, 'organizationIds');
  return withTransaction(pool, async (tx) => {
    const { rowCount } = await tx.query('UPDATE market_zones SET name = $2, time_resolution = $3, order_quantity_resolution = $4, updated_at = now() WHERE id = $1', [
      id,
      input.name,
      input.timeResolution,
      input.orderQuantityResolution,
    ]);
    if (rowCount === 0) return undefined;
    await writeZoneMembers(tx, id, input);
    return getZone(tx, id);
  });
}

export async function deleteZone(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM market_zones WHERE id = $1', [id]);
  return rowCount === 1;
}

export async function participants(db: Queryable, zoneId: number): Promise<{ organizations: unknown[]; markets: unknown[] }> {
  const { rows } = await db.query<{ organizations: unknown[]; markets: unknown[] }>(
    `SELECT
       coalesce((SELECT json_agg(json_build_object('organizationId', o.id, 'organizationName', o.name,
           'resources', coalesce((SELECT json_agg(json_build_object('resourceId', r.id, 'resourceName', r.name) ORDER BY r.id)
                                   FROM grid_resources r WHERE r.organization_id = o.id AND r.market_zone_id = $1), '[]')) ORDER BY o.id)
         FROM market_zone_organizations mo JOIN organizations o ON o.id = mo.organization_id WHERE mo.market_zone_id = $1), '[]') AS organizations,
       coalesce((SELECT json_agg(json_build_object('marketId', m.id, 'name', m.name) ORDER BY m.id) FROM markets m WHERE m.market_zone_id = $1), '[]') AS markets`,
    [zoneId],
  );
  return rows[0]!;
}

// Substations ------------------------------------------------------------------------------

const SUBSTATION_COLUMNS = `s.id, s.organization_id AS "organizationId", s.market_zone_id AS "marketZoneId", s.name,
  coalesce((SELECT json_agg(json_build_object('resourceId', i.resource_id, 'factor', i.factor::float8) ORDER BY i.resource_id) FROM substation_impacts i WHERE i.substation_id = s.id), '[]') AS impacts`;

const substationsReader = rowReader<Substation>(`SELECT ${SUBSTATION_COLUMNS} FROM substations s`, 's');
export const listSubstations = substationsReader.list;
export const getSubstation = substationsReader.get;

async function checkSubstation(db: Queryable, input: SubstationInput): Promise<void> {
  const errors: FieldError[] = [];
  if (!(await getZone(db, input.marketZoneId))) errors.push({ path: 'marketZoneId', message: `market zone ${input.marketZoneId} does not exist` });
  else if (!(await isZoneMember(db, input.marketZoneId, input.organizationId))) errors.push({ path: 'organizationId', message: 'must be a member of the market zone' });
  const ids = input.impacts.map((i) => i.resourceId);
  const { rows } = await db.query<{ id: number }>('SELECT id FROM grid_resources WHERE id = ANY($1::int[])', [ids]);
  const known = new Set(rows.map((r) => r.id));
  ids.forEach((id, i) => {
    if (!known.has(id)) errors.push({ path: `impacts[${i}].resourceId`, message: `grid resource ${id} does not exist` });
    if (ids.indexOf(id) !== i) errors.push({ path: `impacts[${i}].resourceId`, message: 'is listed twice' });
  });
  if (errors.length > 0) throw badRequest('Invalid substation', errors);
}

async function writeImpacts(tx: PoolClient, id: number, impacts: SubstationInput['impacts']): Promise<void> {
  await tx.query('DELETE FROM substation_impacts WHERE substation_id = $1', [id]);
  await tx.query('INSERT INTO substation_impacts (substation_id, resource_id, factor) SELECT $1, unnest($2::int[]), unnest($3::numeric[])', [
    id,
    impacts.map((i) => i.resourceId),
    impacts.map((i) => String(i.factor)),
  ]);
}

export async function createSubstation(pool: Pool, input: SubstationInput): Promise<Substation> {
  await checkSubstation(pool, input);
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO substations (organization_id, market_zone_id, name) VALUES ($1, $2, $3) RETURNING id', [input.organizationId, input.marketZoneId, input.name]);
    await writeImpacts(tx, rows[0]!.id, input.impacts);
    return (await getSubstation(tx, rows[0]!.id))!;
  });
}

export async function updateSubstation(pool: Pool, id: number, input: SubstationInput): Promise<Substation | undefined> {
  await checkSubstation(pool, input);
  return withTransaction(pool, async (tx) => {
    const { rowCount } = await tx.query('UPDATE substations SET organization_id = $2, market_zone_id = $3, name = $4 WHERE id = $1', [id, input.organizationId, input.marketZoneId, input.name]);
    if (rowCount === 0) return undefined;
    await writeImpacts(tx, id, input.impacts);
    return getSubstation(tx, id);
  });
}

/** Orders and transactions refer to substations by foreign key: deleting one in use is a 409. */
export async function deleteSubstation(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM substations WHERE id = $1', [id]);
  return rowCount === 1;
}
