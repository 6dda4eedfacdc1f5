// JSON Schemas of the demand-response objects (OpenADR 3.0.1 shapes, the interface's names).
// One schema per object serves as request body (Ajv, strict: unknown fields are refused) and
// as response documentation. Read-only fields (id, createdDateTime, modificationDateTime,
// objectType, venID) are accepted so a client may send back what it read; their values are
// ignored. Defaults the interface states (eventName, priority, reportName null; timeZoneOffset
// PT0S) are filled in by Ajv.
import { arrayOf, utcDateTime } from '../http/schemas.ts';
import type { JsonSchema } from '../http/types.ts';
import { ISO_3166_ALPHA2 } from './countries.ts';

export const OBJECT_KINDS = ['PROGRAM', 'EVENT', 'REPORT', 'SUBSCRIPTION', 'VEN', 'RESOURCE'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];
/** Operations a subscription may name; GET is accepted (OpenADR lists it) but never notified. */
export const OPERATIONS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type Operation = 'POST' | 'PUT' | 'DELETE';

/** Object ids and id references: 1–128 URL-safe characters. */
export const objectId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9_-]*$', example: 'object-999' } as const;
/** Every name field of a demand-response object: 1–128 characters (interface, Limits). */
export const name128 = { type: 'string', minLength: 1, maxLength: 128 } as const;
const nullableName = { type: ['string', 'null'], minLength: 1, maxLength: 128 } as const;
const nullableText = { type: ['string', 'null'], maxLength: 4096 } as const;
/** OpenADR 3.0.1's duration grammar (src/http/validation.ts, `iso-duration`). */
const duration = { type: 'string', format: 'iso-duration', example: 'PT1H' } as const;
/** An int32, as OpenADR's `format: int32` integers. */
const int32 = { type: 'integer', minimum: -2147483648, maximum: 2147483647 } as const;

function object(properties: Record<string, unknown>, required: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}

function readOnly(kind: ObjectKind): Record<string, unknown> {
  return {
    id: { ...objectId, description: 'Assigned by the VTN; a value sent by the client is ignored.' },
    createdDateTime: { type: 'string', format: 'date-time', description: 'Assigned by the VTN (UTC).' },
    modificationDateTime: { type: 'string', format: 'date-time', description: 'Assigned by the VTN; moves on every update.' },
    objectType: { type: 'string', enum: [kind], description: 'Assigned by the VTN.' },
  };
}

/** A target or attribute entry (OpenADR valuesMap). The type may not contain control
 * characters: target values are indexed as `type U+001F value`. */
export const valuesMap = object(
  {
    type: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f]*$', example: 'GROUP' },
    values: arrayOf({
      anyOf: [
        { type: 'number' },
        { type: 'string' },
        { type: 'boolean' },
        object({ x: { type: 'number' }, y: { type: 'number' } }, ['x', 'y'], { title: 'Point' }),
      ],
    }),
  },
  ['type', 'values'],
  { title: 'ValuesMap' },
);
const valuesMaps = { type: ['array', 'null'], items: valuesMap } as const;

export const intervalPeriod = object(
  { start: { ...utcDateTime, example: '2024-06-15T09:30:00Z' }, duration, randomizeStart: duration },
  ['start'],
  { title: 'IntervalPeriod', description: 'Start (UTC), duration (ISO 8601; absent or PT0S = open-ended) and optional start randomization. Not nullable in OpenADR 3.0.1: null for it or for an optional member in it reads as absent (docs/vtn.md).' },
);

export const interval = object(
  {
    id: { ...int32, description: 'Client-chosen integer, not a sequence number.' },
    intervalPeriod,
    payloads: arrayOf(valuesMap),
  },
  ['id', 'payloads'],
  { title: 'Interval' },
);
/** OpenADR 3.0.1 requires an event's and a report resource's intervals; absent ones are stored
 * as [] (Ajv default) so that what we serve is a valid 3.0.1 object (docs/vtn.md). */
const intervals = { type: 'array', items: interval, default: [] } as const;

export const eventPayloadDescriptor = object(
  {
    objectType: { type: 'string', enum: ['EVENT_PAYLOAD_DESCRIPTOR'] },
    payloadType: name128,
    units: nullableText,
    currency: nullableText,
  },
  ['payloadType'],
  { title: 'EventPayloadDescriptor' },
);

export const reportPayloadDescriptor = object(
  {
    objectType: { type: 'string', enum: ['REPORT_PAYLOAD_DESCRIPTOR'] },
    payloadType: name128,
    readingType: nullableText,
    units: nullableText,
    accuracy: { type: ['number', 'null'] },
    confidence: { type: ['integer', 'null'], minimum: 0, maximum: 100 },
  },
  ['payloadType'],
  { title: 'ReportPayloadDescriptor' },
);

export const reportDescriptor = object(
  {
    payloadType: name128,
    readingType: nullableText,
    units: nullableText,
    targets: valuesMaps,
    aggregate: { type: 'boolean' },
    startInterval: int32,
    numIntervals: int32,
    historical: { type: 'boolean' },
    frequency: int32,
    repeat: int32,
  },
  ['payloadType'],
  { title: 'ReportDescriptor' },
);

export const programSchema = object(
  {
    ...readOnly('PROGRAM'),
    programName: { ...name128, description: 'Required; unique within the VTN.', example: 'ResTOU' },
    programLongName: nullableName,
    retailerName: nullableName,
    retailerLongName: nullableName,
    programType: nullableText,
    country: { type: ['string', 'null'], enum: [...ISO_3166_ALPHA2, null], description: 'ISO 3166-1 alpha-2 code.' },
    principalSubdivision: { type: ['string', 'null'], pattern: '^([A-Z]{2}-)?[A-Z0-9]{1,3}$', description: 'ISO 3166-2 subdivision code (`CO` or `US-CO`).' },
    timeZoneOffset: { ...duration, default: 'PT0S' },
    intervalPeriod,
    programDescriptions: { type: ['array', 'null'], items: object({ URL: { type: 'string', format: 'uri' } }, ['URL']) },
    bindingEvents: { type: ['boolean', 'null'] },
    localPrice: { type: ['boolean', 'null'] },
    payloadDescriptors: { type: ['array', 'null'], items: { anyOf: [eventPayloadDescriptor, reportPayloadDescriptor] } },
    targets: valuesMaps,
  },
  ['programName'],
  { title: 'Program' },
);

export const eventSchema = object(
  {
    ...readOnly('EVENT'),
    programID: { ...objectId, description: 'The program of the event; must exist.' },
    eventName: { ...nullableName, default: null },
    priority: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647, default: null, description: 'Lower is more important.' },
    targets: valuesMaps,
    reportDescriptors: { type: ['array', 'null'], items: reportDescriptor },
    payloadDescriptors: { type: ['array', 'null'], items: eventPayloadDescriptor },
    intervalPeriod,
    intervals: { ...intervals, description: 'Required by OpenADR 3.0.1, optional in the interface: absent is stored as [].' },
  },
  ['programID'],
  { title: 'Event' },
);

export const reportSchema = object(
  {
    ...readOnly('REPORT'),
    programID: { ...objectId, description: 'Must exist.' },
    eventID: { ...objectId, description: 'Must exist and belong to programID.' },
    clientName: name128,
    reportName: { ...nullableName, default: null },
    payloadDescriptors: { type: ['array', 'null'], items: reportPayloadDescriptor },
    resources: {
      type: 'array',
      items: object({ resourceName: name128, intervalPeriod, intervals: { type: 'array', items: interval } }, ['resourceName', 'intervals'], { title: 'ReportResource' }),
      default: [],
      description: 'Required by OpenADR 3.0.1, optional in the interface: absent is stored as [].',
    },
  },
  ['programID', 'eventID', 'clientName'],
  { title: 'Report' },
);

export const objectOperation = object(
  {
    objects: arrayOf({ type: 'string', enum: [...OBJECT_KINDS] }, { minItems: 1 }),
    operations: arrayOf({ type: 'string', enum: [...OPERATIONS] }, { minItems: 1 }),
    callbackUrl: { type: 'string', format: 'uri', minLength: 1, maxLength: 2048, description: 'http or https URL receiving `POST` notifications (an RFC 3986 URI: no spaces).' },
    bearerToken: { type: ['string', 'null'], maxLength: 4096, description: 'Sent as `Authorization: Bearer <bearerToken>` to the callback.' },
  },
  ['objects', 'operations', 'callbackUrl'],
  { title: 'ObjectOperation' },
);

export const subscriptionSchema = object(
  {
    ...readOnly('SUBSCRIPTION'),
    clientName: name128,
    programID: { ...objectId, description: 'Must exist.' },
    objectOperations: { type: 'array', items: objectOperation, default: [], description: 'Required by OpenADR 3.0.1, optional in the interface: absent is stored as [].' },
    targets: valuesMaps,
  },
  ['clientName', 'programID'],
  { title: 'Subscription' },
);

export const resourceSchema = object(
  {
    ...readOnly('RESOURCE'),
    resourceName: { ...name128, description: 'Required; unique within its VEN.' },
    venID: { ...objectId, description: 'Assigned from the path.' },
    attributes: valuesMaps,
    targets: valuesMaps,
  },
  ['resourceName'],
  { title: 'Resource' },
);

export const venSchema = object(
  {
    ...readOnly('VEN'),
    venName: { ...name128, description: 'Required; unique within the VTN.' },
    attributes: valuesMaps,
    targets: valuesMaps,
    resources: { type: ['array', 'null'], items: resourceSchema, description: 'Served nested; ignored on input (use the resource endpoints).' },
    clientID: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 128,
      description: 'Extension (OpenADR 3.1): the VTN credential (its clientId) acting as this VEN. Set by the VTN for a VEN client; business-logic clients may set it.',
    },
  },
  ['venName'],
  { title: 'Ven' },
);

/** The body POSTed to a subscription's callbackUrl. */
export const notificationSchema = object(
  {
    notificationID: { type: 'string', format: 'uuid', description: 'Stable across retries: de-duplicate on it (also in the X-Notification-Id header).' },
    objectType: { type: 'string', enum: [...OBJECT_KINDS] },
    operation: { type: 'string', enum: ['POST', 'PUT', 'DELETE'] },
    object: { type: 'object', additionalProperties: true, description: 'The object after the change (for DELETE, the deleted object).' },
    targets: valuesMaps,
  },
  ['notificationID', 'objectType', 'operation', 'object', 'targets'],
  { title: 'VtnNotification' },
);
