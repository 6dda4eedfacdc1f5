// Settlement specification (GET /api/product/settlement/specification, docs/products.md,
// "Settlement specification").
//
// Which transactions: those of the organization (as seller or buyer) that START in
// [start, end), so consecutive periods never count one twice. Each appears once, on the
// organization's side: sold (it is the seller; counterpart = the buyer) or bought.
// Money (exact numeric in PostgreSQL, never binary floating point):
//   flexibility line  = round(quantity kWh × unitPrice × remunerationPercentage / 100, 2)
//   availability line = round(quantity kW × availabilityPrice × remunerationPercentage / 100, 2)
// rounded half away from zero per line; every total is the sum of its rounded lines. A
// transaction not validated yet is listed with its status and null percentages and contributes
// 0 until it is validated. Lines are ordered by resource, then start, then id.
// Each transaction row keeps its remuneration and its line's JSON text (generated columns,
// migration 002), and one SQL statement sorts, groups and concatenates them into the whole
// document: 100,000 lines cost one round trip and no per-row work in the event loop.
// The route and its response schema: settlementRoutes.ts.
import type { Pool } from '../store/database.ts';

/** Both sides of one kind of transaction (kind 1 = flexibility, 2 = availability: integers,
 * a text sort key would sort by collation): the stored line and remuneration (migration 002). */
const sides = (kind: 1 | 2) => {
  const table = kind === 1 ? 'flexibility_transactions' : 'availability_transactions';
  const columns = 't.id, t.start, t.resource_id, t.remuneration_amount AS amount, t.settlement_line AS line';
  return `SELECT ${kind} AS kind, true AS sold, t.buyer_organization_id AS cp, ${columns} FROM ${table} t WHERE t.seller_organization_id = $1 AND t.start >= $2 AND t.start < $3
    UNION ALL
    SELECT ${kind}, false, t.seller_organization_id, ${columns} FROM ${table} t WHERE t.buyer_organization_id = $1 AND t.start >= $2 AND t.start < $3`;
};

const EMPTY = `'{"totalRemunerationSum":0,"transactions":[]}'`;

// One summary at most per (counterpart, kind, side): string_agg just takes it (max() would compare).
const pick = (kind: 1 | 2, sold: boolean) => `coalesce(string_agg(summary, '') FILTER (WHERE kind = ${kind} AND ${sold ? '' : 'NOT '}sold), ${EMPTY})`;
const sum = (kind: 1 | 2, sold: boolean) => `coalesce(sum(total) FILTER (WHERE kind = ${kind} AND ${sold ? '' : 'NOT '}sold), 0)::text`;

// PostgreSQL writes the document in one pass over the lines: they are grouped by counterpart,
// kind, side and resource (lines of a resource by start, then id), which gives both the
// summaries (the resources' groups by resource id) and the sums per resource.
export const SETTLEMENT_SQL = `
WITH by_resource AS MATERIALIZED (
  SELECT cp, kind, sold, resource_id, sum(amount) AS total, string_agg(line, ',' ORDER BY start, id) AS body
  FROM (${sides(1)} UNION ALL ${sides(2)}) l
  GROUP BY cp, kind, sold, resource_id
), summaries AS (
  SELECT cp, kind, sold, concat('{"totalRemunerationSum":', sum(total), ',"transactions":[', string_agg(body, ',' ORDER BY resource_id), ']}') AS summary
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
SELECT concat('{"organizationId":', $1::int, ',"counterParts":[', (SELECT list FROM counterparts), '],"remunerationPerResource":[', (SELECT list FROM per_resource), ']}') AS json`;

/** Memory for the one sort of the lines (about 150 bytes a line): 100,000 lines sort in memory. */
const WORK_MEM = '64MB';

/** The settlement specification of an organization for [start, end), as JSON text. */
export async function settlementSpecification(pool: Pool, q: { organizationId: number; start: number; end: number }): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN READ ONLY; SET LOCAL work_mem = '${WORK_MEM}'; SET LOCAL jit = off`);
    const { rows } = await client.query<{ json: string }>(SETTLEMENT_SQL, [q.organizationId, new Date(q.start), new Date(q.end)]);
    await client.query('COMMIT');
    return rows[0]!.json;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
