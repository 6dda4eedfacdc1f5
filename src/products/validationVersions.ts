// Every delivery validation of a transaction kept as a version (transaction_validations,
// migration 004; docs/products.md, "Versions and asOf"), and the history read by
// GET /api/product/transaction/{kind}/{id}/validations.
//
// A version holds the outcome (status, figures, the reason when not validated), the instant of
// the readings it used (`readingsAsOf`), when it ran (the writer's settlement instant: the same
// as the transaction's validatedAt and the settlement line version it produced) and why: due
// (the job: a first validation or a retry), correction (readings changed after the figures were
// computed), administrator. A retry by the job that finds exactly what the previous version
// found adds no version: that version's `attempts` and `lastAttemptAt` move instead (a
// transaction waiting for meter data is retried every VALIDATION_RETRY_MS for a month).
import type { Queryable } from '../store/database.ts';
import { isoSql } from './settlementHistory.ts';

export enum ValidationCause {
  Inherited = 0,
  Due = 1,
  Correction = 2,
  Administrator = 3,
}

export const CAUSE_NAMES: Readonly<Record<ValidationCause, string>> = {
  [ValidationCause.Inherited]: 'inherited',
  [ValidationCause.Due]: 'due',
  [ValidationCause.Correction]: 'correction',
  [ValidationCause.Administrator]: 'administrator',
};

/** One validation's outcome, figures as decimal text (null when unknown). */
export interface ValidationOutcome {
  id: number;
  cause: ValidationCause;
  status: number;
  message: string | null;
  /** UTC ms, or null (an availability transaction without calls). */
  readingsAsOf: number | null;
  readingsUpdatedAt: number | null;
  referenceReadingValue?: string | null;
  validationReadingValue?: string | null;
  referenceAdjustmentQuantity?: string | null;
  expectedDeliveredQuantity?: string | null;
  deliveredQuantity: string | null;
  deliveryPercentage: string | null;
  remunerationPercentage: string | null;
  /** Flexibility: where the figures came from (deliveryValidation.ts, ValidationInputs). */
  inputs?: unknown;
}

const FIGURES = ['reference_reading_value', 'validation_reading_value', 'reference_adjustment_quantity', 'expected_delivered_quantity', 'delivered_quantity', 'delivery_percentage', 'remuneration_percentage'] as const;

// $1 kind; the outcomes in columns. A due run whose status, message and figures equal the
// latest version's counts an attempt of that version; every other run adds a version.
const RECORD_SQL = `
WITH u AS (
  SELECT * FROM unnest($2::int[], $3::int[], $4::int[], $5::text[], $6::float8[], $7::float8[], $8::numeric[], $9::numeric[], $10::numeric[], $11::numeric[], $12::numeric[], $13::numeric[], $14::numeric[], $15::json[])
    AS u(id, cause, status, message, readings_as_of, readings_updated_at, ${FIGURES.join(', ')}, inputs)
), latest AS (
  -- One probe of the primary key per transaction, rather than a join over the whole table.
  SELECT l.* FROM u CROSS JOIN LATERAL (SELECT * FROM transaction_validations v WHERE v.kind = $1 AND v.transaction_id = u.id ORDER BY v.version DESC LIMIT 1) l
), same AS (
  SELECT l.transaction_id, l.version FROM latest l JOIN u ON u.id = l.transaction_id
  WHERE u.cause = 1 AND l.status = u.status AND l.message IS NOT DISTINCT FROM u.message
    AND (${FIGURES.map((f) => `l.${f}`).join(', ')}) IS NOT DISTINCT FROM (${FIGURES.map((f) => `u.${f}`).join(', ')}) AND l.inputs::text IS NOT DISTINCT FROM u.inputs::text
), counted AS (
  UPDATE transaction_validations v SET attempts = v.attempts + 1, last_attempt_at = (SELECT settlement_instant())
  FROM same s WHERE v.kind = $1 AND v.transaction_id = s.transaction_id AND v.version = s.version
)
INSERT INTO transaction_validations (kind, transaction_id, version, recorded_at, cause, readings_as_of, readings_updated_at, status, message, ${FIGURES.join(', ')}, inputs, last_attempt_at)
SELECT $1, u.id, coalesce(l.version, 0) + 1, i.at, u.cause, to_timestamp(u.readings_as_of / 1000), to_timestamp(u.readings_updated_at / 1000), u.status, u.message,
  ${FIGURES.map((f) => `u.${f}`).join(', ')}, u.inputs, i.at
FROM u LEFT JOIN latest l ON l.transaction_id = u.id CROSS JOIN (SELECT settlement_instant() AS at) i
WHERE NOT EXISTS (SELECT 1 FROM same s WHERE s.transaction_id = u.id)`;

/** Records the outcomes of one validation run of transactions of `kind`, in the caller's
 * database transaction (after it stored the figures: the same instant). */
export async function recordValidations(tx: Queryable, kind: 1 | 2, outcomes: readonly ValidationOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const col = <K extends keyof ValidationOutcome>(key: K) => outcomes.map((o) => o[key] ?? null);
  await tx.query(RECORD_SQL, [
    kind,
    col('id'),
    col('cause'),
    col('status'),
    col('message'),
    col('readingsAsOf'),
    col('readingsUpdatedAt'),
    col('referenceReadingValue'),
    col('validationReadingValue'),
    col('referenceAdjustmentQuantity'),
    col('expectedDeliveredQuantity'),
    col('deliveredQuantity'),
    col('deliveryPercentage'),
    col('remunerationPercentage'),
    outcomes.map((o) => (o.inputs ? JSON.stringify(o.inputs) : null)),
  ]);
}

const CAUSE_SQL = `CASE v.cause ${Object.entries(CAUSE_NAMES)
  .map(([code, name]) => `WHEN ${code} THEN '${name}'`)
  .join(' ')} END`;

const COMMON = `v.version, ${isoSql('v.recorded_at')} AS "recordedAt", ${CAUSE_SQL} AS cause, ${isoSql('v.readings_as_of')} AS "readingsAsOf",
  v.status AS "deliveryValidationStatus", v.message, v.delivered_quantity::float8 AS "deliveredQuantity", v.delivery_percentage::float8 AS "deliveryPercentage",
  v.remuneration_percentage::float8 AS "remunerationPercentage", v.attempts, ${isoSql('v.last_attempt_at')} AS "lastAttemptAt"`;
const FLEXIBILITY = `${COMMON}, ${isoSql('v.readings_updated_at')} AS "readingsUpdatedAt", v.reference_reading_value::float8 AS "referenceReadingValue",
  v.validation_reading_value::float8 AS "validationReadingValue", v.reference_adjustment_quantity::float8 AS "referenceAdjustmentQuantity", v.inputs AS "validationInputs"`;
const AVAILABILITY = `${COMMON}, v.expected_delivered_quantity::float8 AS "expectedDeliveredQuantity"`;

/** Every validation of a transaction, oldest first. */
export async function validationHistory(db: Queryable, kind: 1 | 2, transactionId: number): Promise<unknown[]> {
  const { rows } = await db.query(`SELECT ${kind === 1 ? FLEXIBILITY : AVAILABILITY} FROM transaction_validations v WHERE v.kind = $1 AND v.transaction_id = $2 ORDER BY v.version`, [kind, transactionId]);
  return rows;
}
