// Schemas of the product endpoints: the interface's read side, and the write side we designed
// (order creation, offers, acceptances, clearing). Quantities: kWh for flexibility, kW for
// availability; prices in the platform currency (docs/products.md).
import { CLEARING_STATUSES, DELIVERY_VALIDATION_STATUSES, PRODUCT_TYPES, codeSchema } from '../codes.ts';
import { arrayOf, dateTime, int32Id, nullable, objectSchema, querySchema, utcDateTime } from '../http/schemas.ts';

const quantity = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 };
const price = { type: 'number', minimum: 0, maximum: 1e9 };
const int = { type: 'integer' };
const nInt = { type: ['integer', 'null'] };
const num = { type: 'number' };
const nNum = { type: ['number', 'null'] };
const nDate = nullable(dateTime);

export const periodQuery = (extra: Record<string, unknown> = {}, required: string[] = []) =>
  querySchema(
    {
      organizationId: int32Id,
      start: { ...utcDateTime, description: 'Inclusive, ISO 8601 UTC (e.g. midnight: YYYY-MM-DDT00:00:00Z).' },
      end: { ...utcDateTime, description: 'Exclusive, ISO 8601 UTC.' },
      ...extra,
    },
    ['organizationId', 'start', 'end', ...required],
  );

export const flexibilityOrderInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The buying organization (a member of the zone).' },
    marketZoneId: int32Id,
    marketId: nullable(int32Id, { default: null, description: 'Default: the zone’s first market.' }),
    resourceId: nullable(int32Id, { default: null, description: 'Only this grid resource may accept.' }),
    productType: { ...codeSchema(PRODUCT_TYPES), description: 'A flexibility product (1 or 2).' },
    start: utcDateTime,
    end: utcDateTime,
    expiresAt: { ...utcDateTime, description: 'Acceptances close; before start.' },
    unitPrice: { ...price, description: 'Per kWh.' },
    minQuantity: { ...quantity, description: 'Smallest acceptance, kWh.' },
    maxQuantity: { ...quantity, description: 'Total ordered energy, kWh.' },
    targetOrganizationIds: arrayOf(int32Id, { uniqueItems: true, default: [], description: 'Who may accept; empty = every member of the zone.' }),
    flexibilityOrderGroupId: nullable(int32Id, { default: null }),
    availabilityTransactionId: nullable(int32Id, { default: null, description: 'Activates capacity reserved by this availability transaction (its seller and resource accept).' }),
    flexibilityScheduleId: nullable(int32Id, { default: null }),
    availabilityScheduleTransactionId: nullable(int32Id, { default: null }),
  },
  ['organizationId', 'marketZoneId', 'productType', 'start', 'end', 'expiresAt', 'unitPrice', 'minQuantity', 'maxQuantity'],
  { title: 'FlexibilityOrderInput' },
);

export const flexibilityOrderSchema = objectSchema(
  {
    id: int,
    createdBy: { type: 'string' },
    createdAt: dateTime,
    expiresAt: dateTime,
    start: dateTime,
    end: dateTime,
    unitPrice: num,
    minQuantity: num,
    maxQuantity: num,
    remainingQuantity: num,
    productType: int,
    organizationId: int,
    resourceId: nInt,
    flexibilityOrderGroupId: nInt,
    availabilityTransactionId: nInt,
    flexibilityScheduleId: nInt,
    availabilityScheduleTransactionId: nInt,
    targetOrganizationIds: arrayOf(int),
    marketZoneId: int,
    marketId: int,
  },
  ['id', 'createdBy', 'createdAt', 'expiresAt', 'start', 'end', 'unitPrice', 'minQuantity', 'maxQuantity', 'remainingQuantity', 'productType', 'organizationId', 'resourceId', 'targetOrganizationIds'],
  { title: 'FlexibilityOrder' },
);

export const availabilityOrderInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The buying organization (a member of the zone).' },
    marketZoneId: int32Id,
    marketId: nullable(int32Id, { default: null, description: 'Default: the zone’s first market.' }),
    substationId: nullable(int32Id, { default: null, description: 'The substation the capacity should relieve; offers carry their resource’s impact on it.' }),
    resourceId: nullable(int32Id, { default: null, description: 'Only this grid resource may offer.' }),
    productType: { ...codeSchema(PRODUCT_TYPES), description: 'An availability product (3 or 4).' },
    start: utcDateTime,
    end: utcDateTime,
    expiresAt: { ...utcDateTime, description: 'Offers close and the order clears; before start.' },
    flexibilityOrdersExpireAt: nullable(utcDateTime, { default: null, description: 'Last moment flexibility orders may activate the reserved capacity; at most end.' }),
    quantity: { ...quantity, description: 'Capacity to reserve, kW.' },
    availabilityPrice: { ...price, description: 'Paid per kW reserved, for the whole period.' },
    impact: nullable({ type: 'number', minimum: 0, maximum: 1 }, { default: null, description: 'Least impact factor on the substation an offer must have.' }),
    targetOrganizationIds: arrayOf(int32Id, { uniqueItems: true, default: [], description: 'Who may offer; empty = every member of the zone.' }),
  },
  ['organizationId', 'marketZoneId', 'productType', 'start', 'end', 'expiresAt', 'quantity', 'availabilityPrice'],
  { title: 'AvailabilityOrderInput' },
);

export const availabilityOrderSchema = objectSchema(
  {
    id: int,
    createdAt: dateTime,
    expiresAt: dateTime,
    flexibilityOrdersExpireAt: nDate,
    start: dateTime,
    end: dateTime,
    productType: int,
    clearingStatus: codeSchema(CLEARING_STATUSES),
    marketId: int,
    organizationId: int,
    substationId: nInt,
    resourceId: nInt,
    quantity: num,
    availabilityPrice: num,
    impact: nNum,
    marketZoneId: int,
    targetOrganizationIds: arrayOf(int),
  },
  ['id', 'createdAt', 'expiresAt', 'start', 'end', 'productType', 'clearingStatus', 'marketId', 'organizationId', 'quantity', 'availabilityPrice'],
  { title: 'AvailabilityOrder' },
);

export const offersInput = objectSchema(
  {
    organizationId: int32Id,
    offers: arrayOf(
      objectSchema({ availabilityOrderId: int32Id, activationPrice: { ...price, description: 'Per kWh when activated.' }, maxQuantity: quantity, minQuantity: quantity }, ['availabilityOrderId', 'activationPrice', 'maxQuantity', 'minQuantity']),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  ['organizationId', 'offers'],
  { title: 'AvailabilityOffersInput' },
);

export const availabilityOfferSchema = objectSchema(
  {
    createdBy: { type: 'string' },
    createdAt: dateTime,
    expiresAt: dateTime,
    impactValue: nNum,
    activationPrice: num,
    maxQuantity: num,
    minQuantity: num,
    organizationId: int,
    resourceId: int,
    availabilityOrderId: int,
    availabilityTransactionId: nInt,
    clearingStatus: codeSchema(CLEARING_STATUSES),
  },
  ['createdBy', 'createdAt', 'expiresAt', 'impactValue', 'activationPrice', 'maxQuantity', 'minQuantity', 'organizationId', 'resourceId', 'availabilityOrderId', 'availabilityTransactionId', 'clearingStatus'],
  { title: 'AvailabilityOffer' },
);

export const acceptanceInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The accepting provider.' },
    resourceId: { ...int32Id, description: 'The provider’s grid resource that will deliver.' },
    quantity: { ...quantity, description: 'kWh, at least the order’s minQuantity and at most its remainingQuantity.' },
  },
  ['organizationId', 'resourceId', 'quantity'],
  { title: 'FlexibilityAcceptance' },
);

const validation = {
  deliveryValidationStatus: codeSchema(DELIVERY_VALIDATION_STATUSES),
  validatedAt: nDate,
  deliveryPercentage: nNum,
  deliveredQuantity: nNum,
};

/** How the transaction reached its resource's VEN (docs/flexibility-loop.md). */
export const dispatchSchema = objectSchema(
  {
    eventID: { type: ['string', 'null'], description: 'The OpenADR event in the provider’s VTN (sent), else null.' },
    state: { type: 'string', enum: ['pending', 'sent', 'none'], description: 'pending: being written to the VTN; sent: the event shows the current figures; none: no event (reason).' },
    reason: { type: ['string', 'null'], description: 'Why there is no event (none), or what delays it (pending).' },
  },
  ['eventID', 'state', 'reason'],
  { title: 'Dispatch' },
);

/** Where the validation's figures came from (docs/flexibility-loop.md). */
export const validationInputsSchema = objectSchema(
  {
    actual: objectSchema(
      {
        registerId: { type: 'integer' },
        source: { type: ['string', 'null'], enum: ['meter', 'ven', 'meter and ven', null], description: 'meter: meter data only; ven: the VEN’s usage reports only; both; null: not read (missing).' },
      },
      ['registerId', 'source'],
    ),
    reference: objectSchema(
      { registerId: { type: ['integer', 'null'] }, source: { type: 'string', enum: ['register', 'virtual register', 'zero'] } },
      ['registerId', 'source'],
    ),
  },
  ['actual', 'reference'],
  { title: 'ValidationInputs' },
);

export const flexibilityTransactionSchema = objectSchema(
  {
    id: int,
    transactionCorrelationId: { type: 'string', format: 'uuid' },
    availabilityTransactionId: nInt,
    flexibilityScheduleId: nInt,
    availabilityScheduleTransactionId: nInt,
    createdBy: { type: 'string' },
    createdAt: dateTime,
    organizationId: int,
    quantity: num,
    marketId: int,
    flexibilityOrderId: int,
    start: dateTime,
    end: dateTime,
    resourceId: int,
    unitPrice: num,
    counterpartOrganizationId: int,
    counterpartCreatedBy: { type: 'string' },
    productType: int,
    ...validation,
    referenceAdjustmentQuantity: nNum,
    referenceReadingValue: nNum,
    validationReadingValue: nNum,
    remunerationPercentage: nNum,
    dispatch: nullable(dispatchSchema),
    validationInputs: nullable(validationInputsSchema),
  },
  ['id', 'transactionCorrelationId', 'createdBy', 'createdAt', 'organizationId', 'quantity', 'marketId', 'flexibilityOrderId', 'start', 'end', 'resourceId', 'unitPrice', 'counterpartOrganizationId', 'counterpartCreatedBy', 'productType', 'deliveryValidationStatus'],
  { title: 'FlexibilityTransaction' },
);

export const flexibilityTransactionsSchema = objectSchema(
  { flexibilityTransactions: arrayOf(flexibilityTransactionSchema), otherFlexibilityTransactionsWithImpact: arrayOf(flexibilityTransactionSchema) },
  ['flexibilityTransactions', 'otherFlexibilityTransactionsWithImpact'],
  { title: 'FlexibilityTransactions' },
);

export const availabilityTransactionSchema = objectSchema(
  {
    id: int,
    createdAt: dateTime,
    createdBy: { type: 'string' },
    organizationId: int,
    resourceId: int,
    activationPrice: num,
    availabilityPrice: num,
    quantity: num,
    impactValue: nNum,
    availabilityOrderId: int,
    marketId: int,
    substationId: nInt,
    counterpartOrganizationId: int,
    counterpartCreatedBy: { type: 'string' },
    start: dateTime,
    end: dateTime,
    productType: int,
    ...validation,
    expectedDeliveredQuantity: nNum,
    remunerationPercentage: nNum,
  },
  ['id', 'createdAt', 'createdBy', 'organizationId', 'resourceId', 'activationPrice', 'availabilityPrice', 'quantity', 'availabilityOrderId', 'marketId', 'counterpartOrganizationId', 'counterpartCreatedBy', 'start', 'end', 'productType', 'deliveryValidationStatus'],
  { title: 'AvailabilityTransaction' },
);

export const substationImpactSchema = objectSchema(
  {
    flexibilityTransactionId: int,
    start: dateTime,
    end: dateTime,
    quantity: num,
    quantityAfterImpact: num,
    impact: num,
    deliveryValidationStatus: codeSchema(DELIVERY_VALIDATION_STATUSES),
    deliveryPercentage: nNum,
    deliveredQuantity: nNum,
    referenceAdjustmentQuantity: nNum,
    referenceReadingValue: nNum,
    validationReadingValue: nNum,
  },
  ['flexibilityTransactionId', 'start', 'end', 'quantity', 'quantityAfterImpact', 'impact', 'deliveryValidationStatus'],
  { title: 'SubstationImpactItem' },
);
