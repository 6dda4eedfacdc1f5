// Schemas of meters, registers, virtual definitions and readings, as the interface names them.
import { BASELINE_ALGORITHMS, CALCULATION_TYPES, MEASUREMENT_PREFIXES, MEASUREMENT_TYPES, METER_TYPES, REGISTER_TYPES, codeSchema } from '../codes.ts';
import { arrayOf, dateTime, int32Id, nullable, objectSchema } from '../http/schemas.ts';
import { MAX_ID_LENGTH } from '../shared/readings/parseReadings.ts';

const externalId = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: 'Your identifier; POST /api/readings names meters and registers by it.' };
const name = { type: 'string', minLength: 1, maxLength: 200 };
const coordinate = { type: ['string', 'null'], maxLength: 64, description: 'Decimal degrees as text, e.g. "10.7522".' };
const seconds = { type: 'integer', minimum: 1, maximum: 31 * 86400 };
const timeZone = { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Oslo.' };

export const meterInput = objectSchema(
  {
    externalId,
    name,
    type: codeSchema(METER_TYPES),
    longitude: { ...coordinate, default: null },
    latitude: { ...coordinate, default: null },
    organizationsIds: arrayOf(int32Id, { uniqueItems: true, default: [], description: 'Organizations sharing the meter (they see it and may post its readings).' }),
  },
  ['externalId', 'name', 'type'],
  { title: 'MeterInput' },
);

export const meterSchema = objectSchema(
  {
    id: int32Id,
    externalId: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'integer' },
    longitude: { type: ['string', 'null'] },
    latitude: { type: ['string', 'null'] },
    organizationsIds: arrayOf({ type: 'integer' }),
  },
  ['id', 'externalId', 'name', 'type', 'longitude', 'latitude', 'organizationsIds'],
  { title: 'Meter' },
);

const virtualDefinitionProperties = {
  calculationType: codeSchema(CALCULATION_TYPES),
  baselineAlgorithmType: nullable(codeSchema(BASELINE_ALGORITHMS), { default: null }),
  timeZone: nullable(timeZone, { default: null, description: 'Zone of `timeOfDay` and of baseline days (default: the register’s time zone).' }),
  constant: { type: ['number', 'null'], default: null },
  sumPreviousValues: { type: 'boolean', default: false, description: 'Return the running total of the computed values.' },
  expression: { type: ['string', 'null'], maxLength: 1000, default: null, description: 'For calculationType 1: arithmetic over r0…rN (sourceRegisters in order), + - * / ( ), min(), max(), abs().' },
  timeOfDay: { type: ['string', 'null'], pattern: '^([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d$', default: null, description: 'With sumPreviousValues: the running total restarts each day at this local time (HH:MM:SS).' },
  sourceRegisters: arrayOf(int32Id, { maxItems: 50, default: [] }),
};

export const virtualDefinitionInput = objectSchema(virtualDefinitionProperties, ['calculationType'], { title: 'VirtualDefinitionInput' });

export const virtualDefinitionSchema = objectSchema(
  {
    id: int32Id,
    calculationType: { type: 'integer' },
    baselineAlgorithmType: { type: ['integer', 'null'] },
    timeZone: { type: ['string', 'null'] },
    constant: { type: ['number', 'null'] },
    sumPreviousValues: { type: 'boolean' },
    expression: { type: ['string', 'null'] },
    timeOfDay: { type: ['string', 'null'] },
    sourceRegisters: arrayOf({ type: 'integer' }),
  },
  ['id', 'calculationType', 'baselineAlgorithmType', 'timeZone', 'constant', 'sumPreviousValues', 'expression', 'timeOfDay', 'sourceRegisters'],
  { title: 'VirtualDefinition' },
);

export const registerInput = objectSchema(
  {
    externalId,
    name,
    type: codeSchema(REGISTER_TYPES),
    measurementType: codeSchema(MEASUREMENT_TYPES),
    measurementPrefix: codeSchema(MEASUREMENT_PREFIXES),
    defaultResolution: { ...seconds, description: 'Seconds between readings as stored (e.g. 900).' },
    updateFrequency: { ...seconds, description: 'Seconds between deliveries of new readings.' },
    isVirtual: { type: 'boolean', default: false },
    meterId: int32Id,
    timeZone: { ...timeZone, default: 'UTC', description: 'IANA zone of the register: day buckets (resolution 86400) start at its local midnight.' },
    virtualDefinition: nullable(virtualDefinitionInput, { default: null, description: 'Required when isVirtual is true.' }),
  },
  ['externalId', 'name', 'type', 'measurementType', 'measurementPrefix', 'defaultResolution', 'updateFrequency', 'meterId'],
  { title: 'RegisterInput' },
);

export const registerSchema = objectSchema(
  {
    id: int32Id,
    externalId: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'integer' },
    measurementType: { type: 'integer' },
    measurementPrefix: { type: 'integer' },
    defaultResolution: { type: 'integer' },
    updateFrequency: { type: 'integer' },
    isVirtual: { type: 'boolean' },
    meterId: { type: 'integer' },
    timeZone: { type: 'string' },
    virtualDefinition: nullable(virtualDefinitionSchema),
  },
  ['id', 'externalId', 'name', 'type', 'measurementType', 'measurementPrefix', 'defaultResolution', 'updateFrequency', 'isVirtual', 'meterId', 'timeZone', 'virtualDefinition'],
  { title: 'Register' },
);

export const meterListSchema = objectSchema(
  { meters: arrayOf(meterSchema), registers: arrayOf(registerSchema) },
  ['meters', 'registers'],
  { title: 'MetersAndRegisters' },
);

export const readingSchema = objectSchema(
  {
    timestamp: dateTime,
    periodTo: dateTime,
    updatedAt: dateTime,
    value: { type: 'number' },
    resolution: { type: 'integer', description: 'Seconds covered by the reading (periodTo − timestamp).' },
  },
  ['timestamp', 'periodTo', 'updatedAt', 'value', 'resolution'],
  { title: 'Reading' },
);

export const registerReadingsSchema = arrayOf(
  objectSchema({ registerId: { type: 'integer' }, readings: arrayOf(readingSchema) }, ['registerId', 'readings'], { title: 'RegisterReadings' }),
);

export const eventDaysSchema = objectSchema(
  { days: arrayOf({ type: 'string', format: 'date' }, { maxItems: 10000, uniqueItems: true }) },
  ['days'],
  { title: 'EventDays' },
);

export const eventPeriodsSchema = objectSchema(
  {
    periods: arrayOf(objectSchema({ start: dateTime, end: dateTime }, ['start', 'end'], { title: 'EventPeriod', description: 'An event from `start` to `end` (end > start, at most 31 days).' }), {
      maxItems: 10000,
    }),
  },
  ['periods'],
  { title: 'EventPeriods' },
);

export const holidaysSchema = objectSchema(
  { days: arrayOf({ type: 'string', format: 'date' }, { maxItems: 10000, uniqueItems: true }) },
  ['days'],
  { title: 'Holidays' },
);

export { dateTime };
