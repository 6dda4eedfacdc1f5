// Settlement specification (GET /api/product/settlement/specification) and the changes between
// two instants (GET /api/product/settlement/changes); docs/products.md, "Settlement
// specification" and "Versions and asOf".
//
// Which transactions: those of the organization (as seller or buyer) that START in
// [start, end), so consecutive periods never count one twice. Each appears once, on the
// organization's side: sold (it is the seller; counterpart = the buyer) or bought.
// Money (exact numeric in PostgreSQL, never binary floating point):
//   flexibility line  = round(quantity kWh × unitPrice × remunerationPercentage / 100, 2)
//   availability line = round(quantity kW × availabilityPrice × remunerationPercentage / 100, 2)
// rounded half away from zero per line; every total is the sum of its rounded lines. A
// transaction not validated yet is listed with its status and null percentages and contributes
// 0 until it is validated. Lines are ordered by resource, then start, then id. Each summary also
// sums the agreed amounts of its agreed lines (accepted, or resolved at the settled figures).
//
// Every state of every line is a version (settlement_line_versions, kept by triggers on the
// transaction tables, migration 003) holding the line's JSON text; the answer "as of" an instant
// is built from the versions current then, by one SQL statement that sorts, groups and
// concatenates them: 100,000 lines cost one round trip and no per-row work in the event loop.
// The routes and their response schemas: settlementRoutes.ts.
import { badRequest } from '../http/errors.ts';
import type { Pool, PoolClient } from '../store/database.ts';
import { answerInstant, iso, isoSql, readInstants } from './settlementHistory.ts';

const VERSION_COLUMNS = 'v.kind, v.transaction_id AS id, v.start, v.resource_id, v.remuneration_amount AS amount, v.agreed_remuneration AS agreed, v.line, v.recorded_at';

/**
 * The lines of organization $1 starting in [$2, $3), as of the instant `asOf` (a parameter):
 * versions recorded at or before it and not superseded then. Four branches, so that each is
 * served by a partial index: the current versions (superseded_at IS NULL) and those superseded
 * after asOf (none when asOf is now), on each side.
 */
function linesAsOf(asOf: string): string {
  const side = (sold: boolean) => {
    const me = sold ? 'seller_organization_id' : 'buyer_organization_id';
    const cp = sold ? 'buyer_organization_id' : 'seller_organization_id';
    const head = `SELECT ${sold} AS sold, v.${cp} AS cp, ${VERSION_COLUMNS} FROM settlement_line_versions v WHERE v.${me} = $1 AND v.start >= $2 AND v.start < $3 AND v.recorded_at <= ${asOf}`;
    return `${head} AND v.superseded_at IS NULL UNION ALL ${head} AND v.superseded_at > ${asOf}`;
  };
  return `${side(true)} UNION ALL ${side(false)}`;
}

const EMPTY = `'{"totalRemunerationSum":0,"agreedRemunerationSum":0,"transactions":[]}'`;

// One summary at most per (counterpart, kind, side): string_agg just takes it (max() would compare).
const pick = (kind: 1 | 2, sold: boolean) => `coalesce(string_agg(summary, '') FILTER (WHERE kind = ${kind} AND ${sold ? '' : 'NOT '}sold), ${EMPTY})`;
const sum = (kind: 1 | 2, sold: boolean) => `coalesce(sum(total) FILTER (WHERE kind = ${kind} AND ${sold ? '' : 'NOT '}sold), 0)::text`;

// PostgreSQL writes the document in one pass over the lines: they are grouped by counterpart,
// kind, side and resource (lines of a resource by start, then id), which gives both the
// summaries (the resources' groups by resource id) and the sums per resource.
// $1 organization, $2/$3 period, $4 asOf, $5 asOf as text.
export const SETTLEMENT_SQL = `
WITH by_resource AS MATERIALIZED (
  SELECT cp, kind, sold, resource_id, sum(amount) AS total, sum(agreed) AS agreed, string_agg(line, ',' ORDER BY start, id) AS body
  FROM (${linesAsOf('$4')}) l
  GROUP BY cp, kind, sold, resource_id
), summaries AS (
  SELECT cp, kind, sold, concat('{"totalRemunerationSum":', sum(total), ',"agreedRemunerationSum":', coalesce(sum(agreed), 0), ',"transactions":[', string_agg(body, ',' ORDER BY resource_id), ']}') AS summary
  FROM by_resource GROUP BY cp, kind, sold
), counterparts AS (
  SELECT string_agg(concat('{"organizationId":', cp, ',"flexibilitySoldSummary":', fs, ',"flexibilityBoughtSummary":', fb,
    ',"availabilitySoldSummary":', avs, ',"availabilityBoughtSummary":', avb, '}'), ',' ORDER BY cp) AS list
  FROM (SELECT cp, ${pick(1, true)} AS fs, ${pick(1, false)} AS fb, ${pick(2, true)} AS avs, ${pick(2, false)} AS avb FROM summaries GROUP BY cp) p
), per_resource AS (
  SELECT string_agg(concat('{"resourceId":', resource_id, ',"bought":{"totalAvailabilityRemunerationSum":', ab, ',"totalFlexibilityRemunerationSum":', fb,
    '},"sold":{"totalAvailabilityRemunerationSum":', asold, ',"totalFlexibilityRemunerationSum":', fsold, '}}'), ',' ORDER BY resource_id) AS list
  FROM (SELECT resource_id, ${sum(2, false)} AS ab, ${sum(1, false)} AS fb, ${sum(2, true)} AS asold, ${sum(1, true)} AS fsold FROM by_resource GROUP BY resource_id) r
)
-- concat() writes each object once; a chain of || would copy the growing text at every step.
SELECT concat('{"organizationId":', $1::int, ',"asOf":"', $5::text, '","counterParts":[', (SELECT list FROM counterparts), '],"remunerationPerResource":[', (SELECT list FROM per_resource), ']}') AS json`;

const version = (alias: string) => `CASE WHEN ${alias}.line IS NULL THEN 'null' ELSE concat('{"recordedAt":"', ${isoSql(`${alias}.recorded_at`)}, '","line":', ${alias}.line, '}') END`;

/**
 * The versions of organization $1's lines starting in [$2, $3) that can differ between `since`
 * and a later instant: those superseded after since (a line's version at since, if it changed)
 * and the current ones recorded after since (a line's version now, if it changed). A line whose
 * version at since is still current has not changed, and is not read at all.
 */
function versionsAfter(since: string): string {
  const side = (sold: boolean) => {
    const me = sold ? 'seller_organization_id' : 'buyer_organization_id';
    const cp = sold ? 'buyer_organization_id' : 'seller_organization_id';
    const head = `SELECT ${sold} AS sold, v.${cp} AS cp, ${VERSION_COLUMNS}, v.superseded_at FROM settlement_line_versions v WHERE v.${me} = $1 AND v.start >= $2 AND v.start < $3`;
    return `${head} AND v.superseded_at IS NULL AND v.recorded_at > ${since} UNION ALL ${head} AND v.superseded_at > ${since}`;
  };
  return `${side(true)} UNION ALL ${side(false)}`;
}

const at = (instant: string) => `SELECT * FROM u WHERE u.recorded_at <= ${instant} AND (u.superseded_at IS NULL OR u.superseded_at > ${instant})`;

// The lines whose version at $4 (since) differs from their version at $5 (until), each with
// both ($6/$7 the two instants as text); in the specification's order.
export const CHANGES_SQL = `
WITH u AS MATERIALIZED (${versionsAfter('$4')}), a AS (${at('$4')}), b AS (${at('$5')}),
c AS (
  SELECT coalesce(b.cp, a.cp) AS cp, coalesce(b.kind, a.kind) AS kind, coalesce(b.sold, a.sold) AS sold, coalesce(b.id, a.id) AS id,
    coalesce(b.resource_id, a.resource_id) AS resource_id, coalesce(b.start, a.start) AS start, ${version('a')} AS before, ${version('b')} AS after
  FROM a FULL JOIN b ON b.kind = a.kind AND b.id = a.id
  WHERE a.line IS DISTINCT FROM b.line
)
SELECT concat('{"organizationId":', $1::int, ',"since":"', $6::text, '","until":"', $7::text, '","changes":[',
  string_agg(concat('{"counterpartOrganizationId":', cp, ',"side":"', CASE WHEN sold THEN 'sold' ELSE 'bought' END, '","kind":"', CASE kind WHEN 1 THEN 'flexibility' ELSE 'availability' END,
    '","transactionId":', id, ',"before":', before, ',"after":', after, '}'), ',' ORDER BY cp, kind, sold DESC, resource_id, start, id), ']}') AS json
FROM c`;

/** Memory for the one sort of the lines (about 150 bytes a line): 100,000 lines sort in memory. */
const WORK_MEM = '64MB';

/** Runs `read` in a read-only transaction tuned for the one big sort, after choosing its instant. */
async function readAt<T>(pool: Pool, read: (client: PoolClient, instants: Awaited<ReturnType<typeof readInstants>>) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN READ ONLY; SET LOCAL work_mem = '${WORK_MEM}'; SET LOCAL jit = off`);
    // Its own statement: the versions are read by a later one, with a snapshot taken after it.
    const instants = await readInstants(client);
    const out = await read(client, instants);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export interface SpecificationQuery {
  organizationId: number;
  start: number;
  end: number;
  /** UTC ms; default: now. */
  asOf?: number;
}

/** The settlement specification of an organization for [start, end) as of `asOf`, as JSON text. */
export async function settlementSpecification(pool: Pool, q: SpecificationQuery): Promise<string> {
  return readAt(pool, async (client, instants) => {
    const asOf = answerInstant(instants, q.asOf);
    const { rows } = await client.query<{ json: string }>(SETTLEMENT_SQL, [q.organizationId, new Date(q.start), new Date(q.end), new Date(asOf), iso(asOf)]);
    return rows[0]!.json;
  });
}

export interface ChangesQuery {
  organizationId: number;
  start: number;
  end: number;
  since: number;
  /** UTC ms; default: now. */
  until?: number;
}

/** The lines of the period whose figures or state differ between `since` and `until`, as JSON text. */
export async function settlementChanges(pool: Pool, q: ChangesQuery): Promise<string> {
  return readAt(pool, async (client, instants) => {
    const until = answerInstant(instants, q.until, 'query.until');
    const since = answerInstant(instants, q.since, 'query.since');
    if (since > until) throw badRequest('since must not be later than until', [{ path: 'query.since', message: 'must not be later than until' }]);
    const { rows } = await client.query<{ json: string }>(CHANGES_SQL, [q.organizationId, new Date(q.start), new Date(q.end), new Date(since), new Date(until), iso(since), iso(until)]);
    return rows[0]!.json;
  });
}
