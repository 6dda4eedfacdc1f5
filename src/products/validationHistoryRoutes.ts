// GET /api/product/transaction/{flexibility|availability}/{id}/validations: every delivery
// validation of a transaction (validationVersions.ts), for whoever sees the transaction in the
// transaction lists (its two parties; for flexibility also an organization whose substation the
// resource affects) with the lists' permission.
import { notFound } from '../http/errors.ts';
import { arrayOf, dateTime, idParams, int32Id, nullable, objectSchema, querySchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { DELIVERY_VALIDATION_STATUSES, codeSchema } from '../codes.ts';
import { CAUSE_NAMES, validationHistory } from './validationVersions.ts';
import { validationInputsSchema } from './schemas.ts';

const nNum = { type: ['number', 'null'] };
const nDate = nullable(dateTime);

const common = {
  version: { type: 'integer', description: '1, 2, … in the order they ran.' },
  recordedAt: { ...dateTime, description: 'When it ran: the instant its figures (and the settlement line) were recorded; the transaction’s validatedAt when it validated.' },
  cause: { type: 'string', enum: Object.values(CAUSE_NAMES), description: 'due: the job (first validation, or a retry while data was missing); correction: readings changed after the previous figures; administrator; inherited: figures present when validation versions began.' },
  readingsAsOf: { ...nDate, description: 'The instant of the readings it used (availability: the latest of its calls’).' },
  deliveryValidationStatus: codeSchema(DELIVERY_VALIDATION_STATUSES),
  message: nullable({ type: 'string' }, { description: 'Why it is not validated.' }),
  deliveredQuantity: nNum,
  deliveryPercentage: nNum,
  remunerationPercentage: nNum,
  attempts: { type: 'integer', description: 'Runs of the job that found this same outcome.' },
  lastAttemptAt: dateTime,
};
const required = Object.keys(common);

export const flexibilityValidationSchema = objectSchema(
  { ...common, readingsUpdatedAt: { ...nDate, description: 'The latest updatedAt of the readings used.' }, referenceReadingValue: nNum, validationReadingValue: nNum, referenceAdjustmentQuantity: nNum, validationInputs: nullable(validationInputsSchema) },
  [...required, 'readingsUpdatedAt', 'referenceReadingValue', 'validationReadingValue', 'referenceAdjustmentQuantity'],
  { title: 'FlexibilityValidation' },
);
export const availabilityValidationSchema = objectSchema({ ...common, expectedDeliveredQuantity: nNum }, [...required, 'expectedDeliveredQuantity'], { title: 'AvailabilityValidation' });

/** Who may see a transaction of each kind (t aliased; $1 the id, $2 the organization). */
const VISIBLE = {
  flexibility: `SELECT 1 FROM flexibility_transactions t WHERE t.id = $1 AND ($2::int IS NULL OR t.seller_organization_id = $2 OR t.buyer_organization_id = $2
    OR EXISTS (SELECT 1 FROM substation_impacts i JOIN substations s ON s.id = i.substation_id WHERE i.resource_id = t.resource_id AND s.organization_id = $2 AND i.factor <> 0))`,
  availability: 'SELECT 1 FROM availability_transactions t WHERE t.id = $1 AND ($2::int IS NULL OR t.seller_organization_id = $2 OR t.buyer_organization_id = $2)',
};

export function validationHistoryRoutes(pool: Pool): RouteDef[] {
  return (['flexibility', 'availability'] as const).map((kind) => ({
    method: 'GET',
    path: `/api/product/transaction/${kind}/:id/validations`,
    summary: `Every delivery validation of a ${kind} transaction`,
    description: 'Oldest first: each run’s outcome and figures, the instant of the readings it used, when and why it ran (docs/products.md, "Versions and asOf").',
    tags: ['Products: transactions'],
    auth: { permission: 'Order.Organization.Read', feature: 'Grid', organization: { in: 'query', name: 'organizationId' } },
    params: idParams('id'),
    query: querySchema({ organizationId: int32Id }, ['organizationId']),
    responses: { 200: { description: 'The validations', schema: arrayOf(kind === 'flexibility' ? flexibilityValidationSchema : availabilityValidationSchema) } },
    async handler(req: ApiRequest<{ id: number }, { organizationId: number }>) {
      const { rows } = await pool.query(VISIBLE[kind], [req.params.id, req.principal!.globalAdmin ? null : req.query.organizationId]);
      if (rows.length === 0) throw notFound(`${kind === 'flexibility' ? 'Flexibility' : 'Availability'} transaction ${req.params.id}`);
      return { status: 200, body: await validationHistory(pool, kind === 'flexibility' ? 1 : 2, req.params.id) };
    },
  }));
}
