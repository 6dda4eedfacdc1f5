// On-demand delivery validation by an administrator: POST /api/admin/transactions/validate.
import { badRequest } from '../http/errors.ts';
import { arrayOf, int32Id, objectSchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { availabilityTransactionSchema, flexibilityTransactionSchema } from './schemas.ts';
import { availabilityColumns, flexColumns } from './transactions.ts';
import type { ValidationDeps } from './validationData.ts';
import { validateNow } from './validationJob.ts';

/** Most transactions of each kind one request may validate. */
export const MAX_ON_DEMAND = 10_000;

const ids = (what: string) => arrayOf(int32Id, { uniqueItems: true, maxItems: MAX_ON_DEMAND, default: [], description: `${what} transactions to validate.` });

const validateInput = objectSchema(
  {
    flexibilityTransactionIds: ids('Flexibility'),
    availabilityTransactionIds: ids('Availability (their activating flexibility transactions are validated first)'),
    start: { ...utcDateTime, description: 'With end: also every transaction starting in [start, end).' },
    end: utcDateTime,
  },
  [],
  { title: 'ValidationRequest' },
);

export const validationResultSchema = objectSchema(
  { flexibilityTransactions: arrayOf(flexibilityTransactionSchema), availabilityTransactions: arrayOf(availabilityTransactionSchema) },
  ['flexibilityTransactions', 'availabilityTransactions'],
  { title: 'ValidationResult' },
);

type Body = { flexibilityTransactionIds: number[]; availabilityTransactionIds: number[]; start?: string; end?: string };

export function validationAdminRoutes(deps: ValidationDeps, retryMs: number): RouteDef[] {
  const { pool } = deps;
  return [
    {
      method: 'POST',
      path: '/api/admin/transactions/validate',
      summary: 'Validate deliveries now',
      description:
        'Computes the delivery-validation figures of the given transactions (ids, and/or every transaction starting in [start, end)) from the meter data ' +
        'available now, whatever their state and even before their period plus VALIDATION_DELAY_MS has passed (docs/products.md). ' +
        `At most ${MAX_ON_DEMAND} of each kind. Transactions are shown from the seller’s side.`,
      tags: ['Admin: products'],
      auth: { globalAdmin: true },
      body: validateInput,
      bodyExample: { flexibilityTransactionIds: [17, 18], start: '2024-06-01T00:00:00Z', end: '2024-06-02T00:00:00Z' },
      responses: { 200: { description: 'The transactions after validation', schema: validationResultSchema } },
      async handler(req: ApiRequest<unknown, unknown, Body>) {
        const b = req.body;
        const flexIds = new Set(b.flexibilityTransactionIds);
        const availabilityIds = new Set(b.availabilityTransactionIds);
        if ((b.start === undefined) !== (b.end === undefined)) throw badRequest('start and end go together', [{ path: b.start === undefined ? 'start' : 'end', message: 'is required with the other' }]);
        if (b.start !== undefined) {
          const start = new Date(parseUtcTimestamp(b.start)!);
          const end = new Date(parseUtcTimestamp(b.end!)!);
          if (start >= end) throw badRequest('start must be before end', [{ path: 'end', message: 'must be after start' }]);
          for (const [table, set] of [['flexibility_transactions', flexIds], ['availability_transactions', availabilityIds]] as const) {
            const { rows } = await pool.query<{ id: number }>(`SELECT id FROM ${table} WHERE start >= $1 AND start < $2 ORDER BY id LIMIT $3`, [start, end, MAX_ON_DEMAND + 1]);
            for (const row of rows) set.add(row.id);
            if (set.size > MAX_ON_DEMAND) throw badRequest(`More than ${MAX_ON_DEMAND} transactions of a kind; ask for a shorter period`, [{ path: 'start', message: 'period too long' }]);
          }
        } else if (flexIds.size + availabilityIds.size === 0) {
          throw badRequest('Name transactions or a period', [{ path: 'flexibilityTransactionIds', message: 'give ids, or start and end' }]);
        }
        const done = await validateNow(deps, { flexibilityTransactionIds: [...flexIds], availabilityTransactionIds: [...availabilityIds] }, retryMs);
        const [flexibility, availability] = await Promise.all([
          pool.query(`SELECT ${flexColumns('t.seller_organization_id')} FROM flexibility_transactions t WHERE t.id = ANY($1::int[]) ORDER BY t.id`, [done.flexibility]),
          pool.query(`SELECT ${availabilityColumns('t.seller_organization_id')} FROM availability_transactions t WHERE t.id = ANY($1::int[]) ORDER BY t.id`, [done.availability]),
        ]);
        return { status: 200, body: { flexibilityTransactions: flexibility.rows, availabilityTransactions: availability.rows } };
      },
    },
  ];
}
