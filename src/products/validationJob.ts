// The delivery-validation job (a PeriodicJob, src/jobs/periodicJob.ts, wired in src/app.ts) and on-demand validation.
//
// Each step claims a batch of due flexibility transactions with FOR UPDATE SKIP LOCKED (so with
// several app instances each transaction is validated by one of them, and a restart resumes
// whatever is due), computes their figures from meter data (validationData.ts) and stores them;
// then it does the same for availability transactions, whose figures come from the
// flexibility transactions that activated them. Due means:
//   - Pending, and end + VALIDATION_DELAY_MS has passed;
//   - MissingActualData, MissingReferenceData or NotMeasurable, ended less than
//     VALIDATION_WINDOW_MS ago, and VALIDATION_RETRY_MS after the last attempt (data may arrive,
//     the resource may be configured);
//   - Validated, ended less than VALIDATION_WINDOW_MS ago, and a reading of its registers in
//     its period was updated after the readings its figures came from (a correction; found
//     through the time-series store by corrections.ts). This scan walks every validated
//     transaction of the window, so each instance runs it at most once per VALIDATION_RETRY_MS
//     (corrections are picked up within that time).
// Availability: Pending past end + delay, or any state within the window once one of its
// flexibility transactions was (re)validated after it; never while one of those is Pending.
//
// Each run is kept as a version (validationVersions.ts) with its cause: due (the two kinds of due
// above), correction, administrator (validateNow). Final settlement lines (accepted, or resolved
// after a dispute: agreement.ts) are never re-validated.
import { DeliveryValidationStatus } from '../codes.ts';
import { notFound } from '../http/errors.ts';
import { withTransaction, type PoolClient, type Queryable } from '../store/database.ts';
import { AgreementState, notFinal } from './agreement.ts';
import { findCorrected } from './corrections.ts';
import { availabilityFigures, type Call, type FlexibilityFigures } from './deliveryValidation.ts';
import { FLEX_ROW_SELECT, measureFlexibility, type FlexRow, type Measured, type ValidationDeps } from './validationData.ts';
import { recordValidations, ValidationCause } from './validationVersions.ts';

export interface ValidationTiming {
  delayMs: number;
  retryMs: number;
  windowMs: number;
  /** Transactions of each kind per step. */
  batchSize: number;
}

/** Per instance: when the correction scan last went through every validated transaction of the
 * window without filling a batch. It walks all of them, so it runs once per retryMs. */
export interface ValidationState {
  lastCorrectionScan: number;
}

const MS = (param: string) => `(${param}::float8 * interval '1 millisecond')`;
const NOT_BEFORE = (alias: string) => `coalesce(${alias}.next_validation_at, '-infinity') <= now()`;
const RETRIED = [DeliveryValidationStatus.MissingActualData, DeliveryValidationStatus.MissingReferenceData, DeliveryValidationStatus.NotMeasurable].join(', ');

/** The two kinds of due flexibility transactions decided here: a WHERE clause over t with $1
 * the delay or the window (ms), and which of the two it takes. The third kind, transactions
 * whose readings were corrected, is found by corrections.ts. */
const FLEX_DUE: { where: string; ms: 'delayMs' | 'windowMs' }[] = [
  { ms: 'delayMs', where: `t.delivery_validation_status = ${DeliveryValidationStatus.Pending} AND t."end" <= now() - ${MS('$1')} AND ${NOT_BEFORE('t')} AND ${notFinal('t')}` },
  { ms: 'windowMs', where: `t.delivery_validation_status IN (${RETRIED}) AND t."end" > now() - ${MS('$1')} AND ${NOT_BEFORE('t')} AND ${notFinal('t')}` },
];

/** Flexibility transactions due for validation now, of both kinds (the backlog metric). */
export async function validationBacklog(db: Queryable, timing: Pick<ValidationTiming, 'delayMs' | 'windowMs'>): Promise<number> {
  let total = 0;
  for (const due of FLEX_DUE) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*) AS n FROM flexibility_transactions t WHERE ${due.where}`, [timing[due.ms]]);
    total += rows[0]!.n;
  }
  return total;
}

/** Claims corrected transactions found by the scan, unless re-validated since ($2: attempts seen). */
const CLAIM_CORRECTED = `${FLEX_ROW_SELECT} JOIN unnest($1::int[], $2::int[]) AS c(id, attempts) ON c.id = t.id AND c.attempts = t.validation_attempts
  WHERE t.delivery_validation_status = ${DeliveryValidationStatus.Validated} AND ${notFinal('t')} ORDER BY t."end", t.id LIMIT $3 FOR UPDATE OF t SKIP LOCKED`;

async function claimFlexibility(tx: PoolClient, timing: ValidationTiming): Promise<FlexRow[]> {
  const rows: FlexRow[] = [];
  for (const due of FLEX_DUE) {
    const room = timing.batchSize - rows.length;
    if (room <= 0) break;
    const { rows: claimed } = await tx.query<FlexRow>(`${FLEX_ROW_SELECT} WHERE ${due.where} ORDER BY t."end", t.id LIMIT $2 FOR UPDATE OF t SKIP LOCKED`, [timing[due.ms], room]);
    rows.push(...claimed);
  }
  return rows;
}

async function saveFlexibility(tx: PoolClient, rows: readonly FlexRow[], measured: Measured, retryMs: number, cause: ValidationCause): Promise<void> {
  const { figures } = measured;
  const done = rows.filter((r) => figures.has(r.id));
  const col = <K extends keyof FlexibilityFigures>(key: K) => done.map((r) => figures.get(r.id)![key]);
  // validated_at is the writer's settlement instant (migration 003): the instant of the settlement
  // line version and of the validation version this run records. (SELECT …): computed once per
  // statement, not once per row.
  await tx.query(
    `UPDATE flexibility_transactions t SET delivery_validation_status = u.status,
       validated_at = CASE WHEN u.status = ${DeliveryValidationStatus.Validated} THEN (SELECT settlement_instant()) END,
       reference_reading_value = u.ref::numeric, validation_reading_value = u.act::numeric, reference_adjustment_quantity = u.adj::numeric,
       delivered_quantity = u.del::numeric, delivery_percentage = u.dp::numeric, remuneration_percentage = u.rp::numeric,
       readings_updated_at = to_timestamp(u.ru / 1000.0), readings_as_of = to_timestamp($11::float8 / 1000), validation_inputs = u.inputs::json, validation_attempted_at = now(),
       validation_attempts = t.validation_attempts + 1, next_validation_at = CASE WHEN u.status IN (${RETRIED}) THEN now() + ${MS('$10')} END
     FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::float8[], $12::text[]) AS u(id, status, ref, act, adj, del, dp, rp, ru, inputs)
     WHERE t.id = u.id`,
    [
      done.map((r) => r.id),
      col('status'),
      col('referenceReadingValue'),
      col('validationReadingValue'),
      col('referenceAdjustmentQuantity'),
      col('deliveredQuantity'),
      col('deliveryPercentage'),
      col('remunerationPercentage'),
      col('readingsUpdatedAt'),
      retryMs,
      measured.readingsAsOf,
      done.map((r) => {
        const inputs = figures.get(r.id)!.inputs;
        return inputs ? JSON.stringify(inputs) : null;
      }),
    ],
  );
  await recordValidations(
    tx,
    1,
    done.map((r) => {
      const f = figures.get(r.id)!;
      return { id: r.id, cause, message: f.reason ?? null, readingsAsOf: measured.readingsAsOf, ...f };
    }),
  );
  // Rows whose data could not be read at all keep their state and are tried again later.
  const failed = rows.filter((r) => !figures.has(r.id)).map((r) => r.id);
  if (failed.length > 0) {
    await tx.query(`UPDATE flexibility_transactions SET validation_attempts = validation_attempts + 1, next_validation_at = now() + ${MS('$2')} WHERE id = ANY($1::int[])`, [failed, retryMs]);
  }
}

async function validateFlexibilityRows(deps: ValidationDeps, tx: PoolClient, rows: FlexRow[], retryMs: number, cause: ValidationCause): Promise<void> {
  if (rows.length === 0) return;
  const measured = await measureFlexibility(deps, rows);
  await saveFlexibility(tx, rows, measured, retryMs, cause);
}

/** Computes and stores the figures of locked availability transactions (their calls are read
 * FOR SHARE); also used when a call's settlement becomes final without a validation
 * (settlementResponses.ts). */
export async function validateAvailabilityRows(tx: PoolClient, claimed: readonly { id: number; cause: ValidationCause }[], retryMs: number): Promise<void> {
  if (claimed.length === 0) return;
  const ids = claimed.map((c) => c.id);
  // FOR SHARE: a concurrent re-validation of a call commits before we read it (or waits for us).
  // A call whose settlement line is final without a validation (accepted or resolved while its
  // data was missing) will never be measured: it counts as delivering nothing.
  const settledUnmeasured = `NOT ${notFinal('f')} AND f.delivery_validation_status <> ${DeliveryValidationStatus.Validated}`;
  const { rows } = await tx.query<Call & { aid: number; readingsAsOf: number | null }>(
    `SELECT f.availability_transaction_id AS aid, f.quantity::text AS quantity,
       CASE WHEN ${settledUnmeasured} THEN '0' ELSE f.delivered_quantity::text END AS "deliveredQuantity",
       CASE WHEN ${settledUnmeasured} THEN ${DeliveryValidationStatus.Validated} ELSE f.delivery_validation_status END AS status,
       (extract(epoch FROM f.readings_as_of) * 1000)::float8 AS "readingsAsOf"
     FROM flexibility_transactions f WHERE f.availability_transaction_id = ANY($1::int[]) ORDER BY f.id FOR SHARE`,
    [ids],
  );
  const calls = new Map<number, (Call & { readingsAsOf: number | null })[]>(ids.map((id) => [id, []]));
  for (const row of rows) calls.get(row.aid)!.push(row);
  const figures = ids.map((id) => availabilityFigures(calls.get(id)!));
  // The readings behind an availability transaction are its calls': the latest of their instants.
  const readingsAsOf = ids.map((id) => calls.get(id)!.reduce<number | null>((latest, c) => (c.readingsAsOf !== null && (latest === null || c.readingsAsOf > latest) ? c.readingsAsOf : latest), null));
  await tx.query(
    `UPDATE availability_transactions a SET delivery_validation_status = u.status,
       validated_at = CASE WHEN u.status = ${DeliveryValidationStatus.Validated} THEN (SELECT settlement_instant()) END,
       expected_delivered_quantity = u.exp::numeric, delivered_quantity = u.del::numeric, delivery_percentage = u.dp::numeric, remuneration_percentage = u.rp::numeric,
       readings_as_of = to_timestamp(u.ras / 1000), validation_attempted_at = now(), validation_attempts = a.validation_attempts + 1,
       next_validation_at = CASE WHEN u.status IN (${RETRIED}) THEN now() + ${MS('$8')} END
     FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[]) AS u(id, status, exp, del, dp, rp, ras)
     WHERE a.id = u.id`,
    [
      ids,
      figures.map((f) => f.status),
      figures.map((f) => f.expectedDeliveredQuantity),
      figures.map((f) => f.deliveredQuantity),
      figures.map((f) => f.deliveryPercentage),
      figures.map((f) => f.remunerationPercentage),
      readingsAsOf,
      retryMs,
    ],
  );
  await recordValidations(
    tx,
    2,
    claimed.map((c, i) => ({ id: c.id, cause: c.cause, message: null, readingsAsOf: readingsAsOf[i] ?? null, readingsUpdatedAt: null, ...figures[i]! })),
  );
}

const AVAILABILITY_DUE = `((a.delivery_validation_status = ${DeliveryValidationStatus.Pending} AND a."end" <= now() - ${MS('$1')} AND ${NOT_BEFORE('a')})
    OR (a.delivery_validation_status <> ${DeliveryValidationStatus.Pending} AND a."end" > now() - ${MS('$2')}
      AND EXISTS (SELECT 1 FROM flexibility_transactions f WHERE f.availability_transaction_id = a.id AND f.validation_attempted_at > coalesce(a.validation_attempted_at, '-infinity'))))
  AND ${notFinal('a')} AND NOT EXISTS (SELECT 1 FROM flexibility_transactions f WHERE f.availability_transaction_id = a.id AND f.delivery_validation_status = ${DeliveryValidationStatus.Pending})`;

/** One step of the job: a batch of each kind. Returns how many transactions were handled. */
export async function validateDueTransactions(deps: ValidationDeps, timing: ValidationTiming, state: ValidationState = { lastCorrectionScan: 0 }): Promise<number> {
  let flexibility = await withTransaction(deps.pool, async (tx) => {
    const rows = await claimFlexibility(tx, timing);
    await validateFlexibilityRows(deps, tx, rows, timing.retryMs, ValidationCause.Due);
    return rows.length;
  });
  // Corrections, with the room left. The scan walks every validated transaction of the window, so
  // it runs at most once per retryMs; outside any transaction (it reads through the pool and the
  // time-series store, and holds no connection while it does).
  const room = timing.batchSize - flexibility;
  if (room > 0 && Date.now() - state.lastCorrectionScan >= timing.retryMs) {
    const corrected = await findCorrected(deps.pool, deps.store, timing.windowMs, room);
    if (corrected.ids.length > 0) {
      flexibility += await withTransaction(deps.pool, async (tx) => {
        const { rows } = await tx.query<FlexRow>(CLAIM_CORRECTED, [corrected.ids, corrected.attempts, room]);
        await validateFlexibilityRows(deps, tx, rows, timing.retryMs, ValidationCause.Correction);
        return rows.length;
      });
    }
    // The scan saw every validated transaction and all it found fit: done until retryMs has passed.
    if (corrected.exhausted) state.lastCorrectionScan = Date.now();
  }
  const availability = await withTransaction(deps.pool, async (tx) => {
    const { rows } = await tx.query<{ id: number; status: number }>(
      `SELECT a.id, a.delivery_validation_status AS status FROM availability_transactions a WHERE ${AVAILABILITY_DUE} ORDER BY a."end", a.id LIMIT $3 FOR UPDATE OF a SKIP LOCKED`,
      [timing.delayMs, timing.windowMs, timing.batchSize],
    );
    // Validated before: one of its calls was re-validated after a correction.
    const claimed = rows.map((r) => ({ id: r.id, cause: r.status === DeliveryValidationStatus.Validated ? ValidationCause.Correction : ValidationCause.Due }));
    await validateAvailabilityRows(tx, claimed, timing.retryMs);
    return rows.length;
  });
  return flexibility + availability;
}

/**
 * Validates the given transactions now, whatever their state and whether or not their period
 * (plus the delay) has passed — an administrator's call, e.g. after fixing meter data. The
 * flexibility transactions that activated a given availability transaction are validated
 * first. Locks availability rows before flexibility rows (the job's order), waiting for a
 * running job step rather than skipping. Unknown ids: 404, nothing validated. Final settlement
 * lines are left as they are (returned among the ids, not re-validated).
 */
export async function validateNow(deps: ValidationDeps, request: { flexibilityTransactionIds: number[]; availabilityTransactionIds: number[] }, retryMs: number): Promise<{ flexibility: number[]; availability: number[] }> {
  return withTransaction(deps.pool, async (tx) => {
    const { rows: availability } = await tx.query<{ id: number; agreementState: AgreementState }>(
      'SELECT id, agreement_state AS "agreementState" FROM availability_transactions WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE',
      [request.availabilityTransactionIds],
    );
    const { rows: calls } = await tx.query<{ id: number }>('SELECT id FROM flexibility_transactions WHERE availability_transaction_id = ANY($1::int[])', [availability.map((a) => a.id)]);
    const flexIds = [...new Set([...request.flexibilityTransactionIds, ...calls.map((c) => c.id)])];
    const { rows } = await tx.query<FlexRow>(`${FLEX_ROW_SELECT} WHERE t.id = ANY($1::int[]) ORDER BY t.id FOR UPDATE OF t`, [flexIds]);
    const found = new Set(rows.map((r) => r.id));
    const foundAvailability = new Set(availability.map((a) => a.id));
    const missing = [
      ...request.flexibilityTransactionIds.filter((id) => !found.has(id)).map((id) => `flexibility transaction ${id}`),
      ...request.availabilityTransactionIds.filter((id) => !foundAvailability.has(id)).map((id) => `availability transaction ${id}`),
    ];
    if (missing.length > 0) throw notFound(missing.slice(0, 10).join(', '));
    const open = (r: { agreementState: AgreementState }) => r.agreementState !== AgreementState.Accepted && r.agreementState !== AgreementState.Resolved;
    await validateFlexibilityRows(deps, tx, rows.filter(open), retryMs, ValidationCause.Administrator);
    await validateAvailabilityRows(tx, availability.filter(open).map((a) => ({ id: a.id, cause: ValidationCause.Administrator })), retryMs);
    return { flexibility: rows.map((r) => r.id), availability: availability.map((a) => a.id) };
  });
}
