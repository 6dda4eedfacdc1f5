// Request schemas of the OpenADR 3.1.0 surface: the 3.0.1 ones (../schemas.ts, strict) with
// 3.1's differences: targets are strings, subscription operations are CRUD names, a program has
// attributes, an event a duration, a report descriptor reportIntervals, a report needs no
// programID, VEN and resource requests carry a discriminator objectType and a clientID, and a
// resource names its VEN (first-level object).
import { arrayOf } from '../../http/schemas.ts';
import type { JsonSchema } from '../../http/types.ts';
import { eventSchema, objectId, objectOperation, programSchema, reportDescriptor, reportSchema, resourceSchema, subscriptionSchema, valuesMap, venSchema } from '../schemas.ts';

type Props = Record<string, unknown>;
const props = (schema: JsonSchema) => (schema as { properties: Props }).properties;
const with_ = (schema: JsonSchema, properties: Props, extra: JsonSchema = {}): JsonSchema => ({ ...schema, properties: { ...props(schema), ...properties }, ...extra });
const without = (properties: Props, ...names: string[]): Props => Object.fromEntries(Object.entries(properties).filter(([k]) => !names.includes(k)));

export const target31 = { type: 'string', minLength: 1, maxLength: 128, example: 'group-1', description: 'A target (`TYPE:value` addresses a 3.0.1 target type; docs/openadr-3.1.md).' } as const;
const targets31 = { type: ['array', 'null'], items: target31, description: 'Targets (strings).' } as const;
const clientID = { type: 'string', minLength: 1, maxLength: 128, description: 'The VTN credential (client id) the object belongs to; assigned by the VTN.' } as const;
const duration = { type: 'string', format: 'iso-duration', example: 'PT1H' } as const;

export const program31 = with_(programSchema, { targets: targets31, attributes: { type: ['array', 'null'], items: valuesMap } }, { title: 'Program31' });

export const reportDescriptor31 = with_(reportDescriptor, {
  targets: targets31,
  reportIntervals: { type: 'string', enum: ['INTERVALS', 'SUB_INTERVALS', 'OPEN_INTERVALS'], description: 'Only INTERVALS (3.0.1’s meaning) is accepted; docs/openadr-3.1.md.' },
}, { title: 'ReportDescriptor31' });

export const event31 = with_(eventSchema, {
  targets: targets31,
  duration: { ...duration, description: 'OpenADR 3.1: duration of the event (may loop intervals).' },
  reportDescriptors: { type: ['array', 'null'], items: reportDescriptor31 },
}, { title: 'Event31' });

export const report31 = { ...with_(reportSchema, { clientID }), required: ['eventID', 'clientName'], title: 'Report31' };

export const subscription31 = {
  ...with_(subscriptionSchema, {
    clientID,
    targets: targets31,
    objectOperations: {
      type: 'array',
      items: with_(objectOperation, { operations: arrayOf({ type: 'string', enum: ['READ', 'CREATE', 'UPDATE', 'DELETE'] }, { minItems: 1 }) }, { title: 'ObjectOperation31' }),
    },
  }),
  required: ['clientName', 'objectOperations'],
  title: 'Subscription31',
};

export const ven31 = with_(
  { ...venSchema, properties: without(props(venSchema), 'resources') },
  { targets: targets31, objectType: { type: 'string', enum: ['VEN', 'BL_VEN_REQUEST', 'VEN_VEN_REQUEST'], description: 'Request discriminator; served as VEN.' } },
  { title: 'Ven31' },
);

export const resource31 = {
  ...with_(resourceSchema, {
    targets: targets31,
    clientID,
    venID: { ...objectId, description: 'The VEN of the resource (required: resources are first-level objects in 3.1).' },
    objectType: { type: 'string', enum: ['RESOURCE', 'BL_RESOURCE_REQUEST', 'VEN_RESOURCE_REQUEST'], description: 'Request discriminator; served as RESOURCE.' },
  }),
  required: ['resourceName', 'venID'],
  title: 'Resource31',
};

const topic = { type: 'string' } as const;
export const topicsResponse = {
  type: 'object',
  title: 'NotifierTopicsResponse',
  properties: { topics: { type: 'object', properties: { CREATE: topic, UPDATE: topic, DELETE: topic, ALL: topic }, required: ['UPDATE', 'DELETE'] } },
  required: ['topics'],
} as const;

export const notifiersResponse = {
  type: 'object',
  title: 'NotifiersResponse',
  properties: {
    WEBHOOK: { type: 'boolean' },
    MQTT: {
      type: 'object',
      properties: {
        URIS: arrayOf({ type: 'string' }),
        serialization: { type: 'string', enum: ['JSON'] },
        authentication: { type: 'object', properties: { method: { type: 'string' }, username: { type: 'string' } }, required: ['method'] },
      },
      required: ['URIS', 'serialization', 'authentication'],
    },
  },
  required: ['WEBHOOK'],
} as const;

export const authServerInfo = { type: 'object', title: 'AuthServerInfo', properties: { tokenURL: { type: 'string' } }, required: ['tokenURL'] } as const;
