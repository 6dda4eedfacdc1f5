// Settlement agreed (docs/products.md, "Settlement agreed"): the seller accepts or disputes a
// settlement line; the buyer resolves a dispute with the figures the parties settled on, or the
// seller withdraws it. Rules:
//   - only the seller responds (as the aggregator does in USEF's settle phase), once the line has
//     a validation outcome (not Pending), and only while it is unanswered: an accepted or
//     resolved line is final, a disputed one waits for its dispute to close;
//   - `accepted` agrees to the line's totalRemuneration as it stands (optionally only if the line
//     has not changed since the specification the seller answers: specificationAsOf);
//   - `disputed` opens a dispute; while it is open the line is still re-validated (a correction
//     may be what the dispute is about); the buyer resolves it with the amount settled on (final),
//     or the seller withdraws it (the line is unanswered again);
//   - final lines are never re-validated (validationJob.ts, corrections.ts); a call of an
//     availability transaction that becomes final without a validation (its data was missing)
//     counts as delivering nothing, and the availability transaction is re-validated at once.
// Every change is written at the writer's settlement instant (migration 003): responses once,
// disputes with the instants they opened and closed, the line's agreement as a new line version.
// Rows are locked as the validation job locks them: an availability transaction before the
// flexibility transactions that call it; then the dispute.
import { DeliveryValidationStatus } from '../codes.ts';
import { badRequest, conflict, forbidden, notFound } from '../http/errors.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { withTransaction, type Pool, type PoolClient } from '../store/database.ts';
import { AGREEMENT_NAMES, AgreementState, notFinal } from './agreement.ts';
import { decimal, decimalText, isMultipleOf } from './decimal.ts';
import { answerInstant, iso, readInstants } from './settlementHistory.ts';
import { validateAvailabilityRows } from './validationJob.ts';
import { ValidationCause } from './validationVersions.ts';

export type LineKind = 'flexibility' | 'availability';
const CODE: Record<LineKind, 1 | 2> = { flexibility: 1, availability: 2 };
const TABLE: Record<LineKind, string> = { flexibility: 'flexibility_transactions', availability: 'availability_transactions' };
const NAME: Record<LineKind, string> = { flexibility: 'Flexibility transaction', availability: 'Availability transaction' };

/** Largest settled amount accepted (as quantities and prices: 1e12 × 1e9 would not fit a line). */
export const MAX_SETTLED = 1e15;

export interface ResponseInput {
  organizationId: number;
  flexibilityTransactionId?: number;
  availabilityTransactionId?: number;
  response: 'accepted' | 'disputed';
  reason: string | null;
  specificationAsOf?: string;
}

export interface ResolutionInput {
  organizationId: number;
  totalRemuneration: number;
  remunerationPercentage: number | null;
  reason: string | null;
}

export interface WithdrawalInput {
  organizationId: number;
  reason: string | null;
}

interface LockedLine {
  id: number;
  /** The availability transaction a flexibility transaction calls, if any. */
  availabilityId: number | null;
  seller: number;
  buyer: number;
  start: Date;
  status: number;
  agreementState: AgreementState;
  disputeId: number | null;
  amount: string;
  /** When the line's current version was recorded (UTC ms). */
  recordedAt: number;
}

async function lockLine(tx: PoolClient, kind: LineKind, id: number): Promise<LockedLine | undefined> {
  if (kind === 'flexibility') {
    // The availability transaction it calls first (never changes: no lock needed to read it).
    await tx.query('SELECT a.id FROM flexibility_transactions f JOIN availability_transactions a ON a.id = f.availability_transaction_id WHERE f.id = $1 FOR UPDATE OF a', [id]);
  }
  const { rows } = await tx.query<LockedLine>(
    `SELECT t.id, ${kind === 'flexibility' ? 't.availability_transaction_id' : 'NULL::int'} AS "availabilityId", t.seller_organization_id AS seller, t.buyer_organization_id AS buyer, t.start, t.delivery_validation_status AS status,
       t.agreement_state AS "agreementState", t.dispute_id AS "disputeId", coalesce(t.remuneration_amount, 0)::text AS amount,
       (SELECT extract(epoch FROM v.recorded_at) * 1000 FROM settlement_line_versions v WHERE v.kind = $2 AND v.transaction_id = t.id AND v.superseded_at IS NULL)::float8 AS "recordedAt"
     FROM ${TABLE[kind]} t WHERE t.id = $1 FOR UPDATE OF t`,
    [id, CODE[kind]],
  );
  return rows[0];
}

/** The line, if `organizationId` is one of its parties; otherwise 404 (whether or not it exists). */
async function partyLine(tx: PoolClient, kind: LineKind, id: number, organizationId: number): Promise<LockedLine & { side: 'seller' | 'buyer' }> {
  const line = await lockLine(tx, kind, id);
  if (!line || (line.seller !== organizationId && line.buyer !== organizationId)) throw notFound(`${NAME[kind]} ${id}`);
  return { ...line, side: line.seller === organizationId ? 'seller' : 'buyer' };
}

const setAgreement = (kind: LineKind) => `UPDATE ${TABLE[kind]} SET agreement_state = $2, agreed_remuneration = $3::numeric, dispute_id = $4 WHERE id = $1`;

// JSON of a response (alias r) and of a dispute (alias d) as of $N (a timestamptz; 'infinity' for now).
export const RESPONSE_COLUMNS = `r.id, CASE WHEN r.kind = 1 THEN r.transaction_id END AS "flexibilityTransactionId", CASE WHEN r.kind = 2 THEN r.transaction_id END AS "availabilityTransactionId",
  r.seller_organization_id AS "sellerOrganizationId", r.buyer_organization_id AS "buyerOrganizationId", CASE r.response WHEN 1 THEN 'accepted' ELSE 'disputed' END AS response,
  r.reason, r.line_remuneration::float8 AS "lineRemuneration", r.dispute_id AS "disputeId", r.created_by AS "createdBy", r.recorded_at AS "recordedAt"`;

export function disputeColumns(asOf: string): string {
  const closed = `d.closed_at <= ${asOf}`;
  const ifClosed = (expression: string) => `CASE WHEN ${closed} THEN ${expression} END`;
  return `d.id, CASE WHEN d.kind = 1 THEN d.transaction_id END AS "flexibilityTransactionId", CASE WHEN d.kind = 2 THEN d.transaction_id END AS "availabilityTransactionId",
    d.seller_organization_id AS "sellerOrganizationId", d.buyer_organization_id AS "buyerOrganizationId",
    CASE WHEN ${closed} THEN (CASE d.state WHEN 2 THEN 'resolved' ELSE 'withdrawn' END) ELSE 'open' END AS state,
    d.reason, d.disputed_remuneration::float8 AS "disputedRemuneration", d.opened_by AS "openedBy", d.opened_at AS "openedAt",
    ${ifClosed('d.closed_by')} AS "closedBy", ${ifClosed('d.closed_at')} AS "closedAt", ${ifClosed('d.closing_reason')} AS "closingReason",
    ${ifClosed('d.settled_remuneration::float8')} AS "settledRemuneration", ${ifClosed('d.settled_remuneration_percentage::float8')} AS "settledRemunerationPercentage"`;
}

const NOW_COLUMNS = disputeColumns("'infinity'::timestamptz");

/** The seller's response to a settlement line; returns it, with the dispute it opened. */
export async function respond(pool: Pool, input: ResponseInput, createdBy: string, retryMs: number): Promise<{ response: unknown; dispute: unknown | null }> {
  const [kind, id] = lineOf(input);
  const reason = input.reason?.trim() || null;
  if (input.response === 'disputed' && reason === null) throw badRequest('A dispute needs a reason', [{ path: 'reason', message: 'is required when the response is disputed' }]);
  return withTransaction(pool, async (tx) => {
    const line = await partyLine(tx, kind, id, input.organizationId);
    if (line.side !== 'seller') throw forbidden('Only the seller responds to a settlement line; the buyer resolves disputes');
    if (line.status === DeliveryValidationStatus.Pending) throw conflict(`${NAME[kind]} ${id} has not been validated yet`);
    if (line.agreementState === AgreementState.Disputed) throw conflict(`${NAME[kind]} ${id} is disputed (dispute ${line.disputeId}): withdraw the dispute first`);
    if (line.agreementState !== AgreementState.Unanswered) throw conflict(`${NAME[kind]} ${id} is already ${AGREEMENT_NAMES[line.agreementState]}: its settlement is final`);
    if (input.specificationAsOf !== undefined && line.recordedAt > parseUtcTimestamp(input.specificationAsOf)!) {
      throw conflict(`The settlement line of ${NAME[kind].toLowerCase()} ${id} changed at ${iso(line.recordedAt)}, after the specification answered (asOf ${input.specificationAsOf}); fetch it again`);
    }
    let disputeId: number | null = null;
    if (input.response === 'disputed') {
      const { rows } = await tx.query<{ id: number }>(
        `INSERT INTO settlement_disputes (kind, transaction_id, seller_organization_id, buyer_organization_id, start, reason, disputed_remuneration, opened_by, opened_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, settlement_instant()) RETURNING id`,
        [CODE[kind], id, line.seller, line.buyer, line.start, reason, line.amount, createdBy],
      );
      disputeId = rows[0]!.id;
      await tx.query(setAgreement(kind), [id, AgreementState.Disputed, null, disputeId]);
    } else {
      await tx.query(setAgreement(kind), [id, AgreementState.Accepted, line.amount, null]);
      await settleCall(tx, line, retryMs);
    }
    const { rows } = await tx.query(
      `WITH r AS (
         INSERT INTO settlement_responses (kind, transaction_id, seller_organization_id, buyer_organization_id, start, response, reason, line_remuneration, dispute_id, created_by, recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10, settlement_instant()) RETURNING *)
       SELECT ${RESPONSE_COLUMNS} FROM r`,
      [CODE[kind], id, line.seller, line.buyer, line.start, input.response === 'accepted' ? 1 : 2, reason, line.amount, disputeId, createdBy],
    );
    const dispute = disputeId === null ? null : (await tx.query(`SELECT ${NOW_COLUMNS} FROM settlement_disputes d WHERE d.id = $1`, [disputeId])).rows[0];
    return { response: rows[0], dispute };
  });
}

/** A call whose line just became final without a validation will not be measured any more: its
 * availability transaction (locked by lockLine) is validated again now, unless final itself. */
async function settleCall(tx: PoolClient, line: LockedLine, retryMs: number): Promise<void> {
  if (line.availabilityId === null || line.status === DeliveryValidationStatus.Validated) return;
  const { rows } = await tx.query<{ id: number }>(`SELECT a.id FROM availability_transactions a WHERE a.id = $1 AND ${notFinal('a')}`, [line.availabilityId]);
  if (rows.length > 0) await validateAvailabilityRows(tx, [{ id: line.availabilityId, cause: ValidationCause.Correction }], retryMs);
}

function lineOf(input: { flexibilityTransactionId?: number; availabilityTransactionId?: number }): [LineKind, number] {
  const { flexibilityTransactionId: f, availabilityTransactionId: a } = input;
  if ((f === undefined) === (a === undefined)) {
    throw badRequest('Name one settlement line', [{ path: f === undefined ? 'flexibilityTransactionId' : 'availabilityTransactionId', message: 'give exactly one of flexibilityTransactionId and availabilityTransactionId' }]);
  }
  return f !== undefined ? ['flexibility', f] : ['availability', a!];
}

/** Locks an open dispute and its line for a party; 404 for anyone else, 409 once it is closed. */
async function openDispute(tx: PoolClient, disputeId: number, organizationId: number): Promise<{ kind: LineKind; line: LockedLine & { side: 'seller' | 'buyer' } }> {
  const { rows } = await tx.query<{ kind: 1 | 2; transactionId: number }>('SELECT kind, transaction_id AS "transactionId" FROM settlement_disputes WHERE id = $1', [disputeId]);
  const found = rows[0];
  const missing = notFound(`Dispute ${disputeId}`);
  if (!found) throw missing;
  const kind: LineKind = found.kind === 1 ? 'flexibility' : 'availability';
  const line = await lockLine(tx, kind, found.transactionId);
  if (!line || (line.seller !== organizationId && line.buyer !== organizationId)) throw missing;
  const { rows: state } = await tx.query<{ state: number }>('SELECT state FROM settlement_disputes WHERE id = $1 FOR UPDATE', [disputeId]);
  if (state[0]!.state !== 1) throw conflict(`Dispute ${disputeId} is already ${state[0]!.state === 2 ? 'resolved' : 'withdrawn'}`);
  return { kind, line: { ...line, side: line.seller === organizationId ? 'seller' : 'buyer' } };
}

/** The buyer records what the parties settled on: the dispute is resolved and the line final. */
export async function resolveDispute(pool: Pool, disputeId: number, input: ResolutionInput, closedBy: string, retryMs: number): Promise<unknown> {
  const amount = decimal(input.totalRemuneration);
  if (amount.lt(0) || amount.gt(MAX_SETTLED) || !isMultipleOf(amount, '0.01')) {
    throw badRequest('Invalid settled amount', [{ path: 'totalRemuneration', message: `must be an amount of the platform currency with at most 2 decimals, 0 to ${MAX_SETTLED}` }]);
  }
  return withTransaction(pool, async (tx) => {
    const { kind, line } = await openDispute(tx, disputeId, input.organizationId);
    if (line.side !== 'buyer') throw forbidden('The buyer resolves a dispute; the seller may withdraw it');
    const settled = decimalText(amount);
    await tx.query(
      `UPDATE settlement_disputes SET state = 2, closed_by = $2, closed_at = settlement_instant(), closing_reason = $3, settled_remuneration = $4::numeric,
         settled_remuneration_percentage = $5::numeric WHERE id = $1`,
      [disputeId, closedBy, input.reason?.trim() || null, settled, input.remunerationPercentage === null ? null : String(input.remunerationPercentage)],
    );
    await tx.query(setAgreement(kind), [line.id, AgreementState.Resolved, settled, disputeId]);
    await settleCall(tx, line, retryMs);
    return (await tx.query(`SELECT ${NOW_COLUMNS} FROM settlement_disputes d WHERE d.id = $1`, [disputeId])).rows[0];
  });
}

/** The seller withdraws its dispute: the line is unanswered again. */
export async function withdrawDispute(pool: Pool, disputeId: number, input: WithdrawalInput, closedBy: string): Promise<unknown> {
  return withTransaction(pool, async (tx) => {
    const { kind, line } = await openDispute(tx, disputeId, input.organizationId);
    if (line.side !== 'seller') throw forbidden('The seller who disputed withdraws a dispute; the buyer resolves it');
    await tx.query('UPDATE settlement_disputes SET state = 3, closed_by = $2, closed_at = settlement_instant(), closing_reason = $3 WHERE id = $1', [disputeId, closedBy, input.reason?.trim() || null]);
    await tx.query(setAgreement(kind), [line.id, AgreementState.Unanswered, null, null]);
    return (await tx.query(`SELECT ${NOW_COLUMNS} FROM settlement_disputes d WHERE d.id = $1`, [disputeId])).rows[0];
  });
}

export interface HistoryQuery {
  organizationId: number;
  start: number;
  end: number;
  asOf?: number;
  state?: 'open' | 'resolved' | 'withdrawn';
}

/** Disputes of lines starting in [start, end) that the organization is a party to, as of asOf. */
export async function listDisputes(pool: Pool, q: HistoryQuery): Promise<{ asOf: string; disputes: unknown[] }> {
  const asOf = answerInstant(await readInstants(pool), q.asOf);
  // A later statement than the instant's (settlementHistory.ts).
  const { rows } = await pool.query(
    `SELECT * FROM (SELECT ${disputeColumns('$4')} FROM settlement_disputes d
       WHERE (d.seller_organization_id = $1 OR d.buyer_organization_id = $1) AND d.start >= $2 AND d.start < $3 AND d.opened_at <= $4) x
     WHERE $5::text IS NULL OR x.state = $5 ORDER BY x."openedAt", x.id`,
    [q.organizationId, new Date(q.start), new Date(q.end), new Date(asOf), q.state ?? null],
  );
  return { asOf: iso(asOf), disputes: rows };
}

/** Responses to lines starting in [start, end) that the organization is a party to, as of asOf. */
export async function listResponses(pool: Pool, q: HistoryQuery): Promise<{ asOf: string; responses: unknown[] }> {
  const asOf = answerInstant(await readInstants(pool), q.asOf);
  const { rows } = await pool.query(
    `SELECT ${RESPONSE_COLUMNS} FROM settlement_responses r
     WHERE (r.seller_organization_id = $1 OR r.buyer_organization_id = $1) AND r.start >= $2 AND r.start < $3 AND r.recorded_at <= $4 ORDER BY r.recorded_at, r.id`,
    [q.organizationId, new Date(q.start), new Date(q.end), new Date(asOf)],
  );
  return { asOf: iso(asOf), responses: rows };
}
