// Every numeric code of the platform, in one module (DESIGN.md, Numeric codes). The interface
// leaves their meanings open; these tables define them. Each table is a TS enum plus a
// description per value, from which the request/response schemas (unknown codes → 400), the
// OpenAPI document and the tables of docs/codes.md are built.

import { BASELINE_ALGORITHMS as BASELINE_SPECS, BaselineAlgorithm } from './shared/virtual/baselineAlgorithms.ts';

export { BaselineAlgorithm };

/** A code table: a description for every value of its enum `E` (a missing one fails typecheck). */
export interface CodeTable<E extends number = number> {
  /** Schema/component name. */
  name: string;
  description: string;
  values: Readonly<Record<E, string>>;
}

/** What a meter measures. */
export enum MeterType {
  Electricity = 1,
  DistrictHeating = 2,
  Gas = 3,
  Water = 4,
  Other = 5,
}

/** The direction or role of a register's quantity. */
export enum RegisterType {
  Import = 1,
  Export = 2,
  Net = 3,
  Other = 4,
}

/** The physical quantity a register holds; decides how readings aggregate into larger buckets. */
export enum MeasurementType {
  ActiveEnergy = 1,
  ReactiveEnergy = 2,
  ActivePower = 3,
  ReactivePower = 4,
  Voltage = 5,
  Current = 6,
  Temperature = 7,
  Volume = 8,
  Flow = 9,
  Price = 10,
  Other = 11,
}

/** SI prefix of a register's unit, as its power of ten: a value v means v × 10^prefix base units. */
export enum MeasurementPrefix {
  Milli = -3,
  None = 0,
  Kilo = 3,
  Mega = 6,
  Giga = 9,
}

/** How a virtual register is computed from its source registers. */
export enum CalculationType {
  Expression = 1,
  Constant = 2,
  Baseline = 3,
}

/** What a grid resource is. */
export enum ResourceType {
  FlexibleConsumption = 1,
  Production = 2,
  Storage = 3,
  Aggregate = 4,
  Other = 5,
}

/** The direction(s) a grid resource can regulate. Up = less consumption or more production
 * (delivered quantity = reference − actual net consumption); Down = the opposite. */
export enum RegulationType {
  Up = 1,
  Down = 2,
  UpAndDown = 3,
}

/** Traded products: flexibility (activated energy) and availability (reserved capacity), each
 * upward or downward. */
export enum ProductType {
  FlexibilityUp = 1,
  FlexibilityDown = 2,
  AvailabilityUp = 3,
  AvailabilityDown = 4,
}

/** A market zone's time grid: order and offer periods start and end on multiples of it. */
export enum TimeResolution {
  QuarterHour = 1,
  HalfHour = 2,
  Hour = 3,
  Day = 4,
}

export const TIME_RESOLUTION_SECONDS: Readonly<Record<TimeResolution, number>> = {
  [TimeResolution.QuarterHour]: 900,
  [TimeResolution.HalfHour]: 1800,
  [TimeResolution.Hour]: 3600,
  [TimeResolution.Day]: 86400,
};

/** Where an availability order or offer is in clearing (state diagram: docs/products.md). */
export enum ClearingStatus {
  Open = 1,
  Cleared = 2,
  PartiallyCleared = 3,
  NotCleared = 4,
  Accepted = 5,
  Rejected = 6,
  Cancelled = 7,
}

/** Where a transaction is in delivery validation (state diagram: docs/products.md). */
export enum DeliveryValidationStatus {
  Pending = 1,
  Validated = 2,
  MissingActualData = 3,
  MissingReferenceData = 4,
  NotMeasurable = 5,
}

/** Measurement types whose readings are quantities per interval: buckets sum them. All others
 * (power, voltage, temperature, flow, price, …) are rates or states: buckets average them. */
export const SUMMED_MEASUREMENTS: ReadonlySet<MeasurementType> = new Set([MeasurementType.ActiveEnergy, MeasurementType.ReactiveEnergy, MeasurementType.Volume]);

export const METER_TYPES: CodeTable<MeterType> = {
  name: 'MeterType',
  description: 'Meter `type`.',
  values: {
    [MeterType.Electricity]: 'Electricity',
    [MeterType.DistrictHeating]: 'District heating',
    [MeterType.Gas]: 'Gas',
    [MeterType.Water]: 'Water',
    [MeterType.Other]: 'Other',
  },
};

export const REGISTER_TYPES: CodeTable<RegisterType> = {
  name: 'RegisterType',
  description: 'Register `type`: the direction of the quantity.',
  values: {
    [RegisterType.Import]: 'Import (consumption, from the grid)',
    [RegisterType.Export]: 'Export (production, to the grid)',
    [RegisterType.Net]: 'Net (import minus export)',
    [RegisterType.Other]: 'Other',
  },
};

export const MEASUREMENT_TYPES: CodeTable<MeasurementType> = {
  name: 'MeasurementType',
  description: 'Register `measurementType`: the physical quantity. Energy and volume readings are summed into larger buckets; all others are averaged.',
  values: {
    [MeasurementType.ActiveEnergy]: 'Active energy, Wh (summed)',
    [MeasurementType.ReactiveEnergy]: 'Reactive energy, varh (summed)',
    [MeasurementType.ActivePower]: 'Active power, W (averaged)',
    [MeasurementType.ReactivePower]: 'Reactive power, var (averaged)',
    [MeasurementType.Voltage]: 'Voltage, V (averaged)',
    [MeasurementType.Current]: 'Current, A (averaged)',
    [MeasurementType.Temperature]: 'Temperature, °C (averaged)',
    [MeasurementType.Volume]: 'Volume, m³ (summed)',
    [MeasurementType.Flow]: 'Flow, m³/h (averaged)',
    [MeasurementType.Price]: 'Price per unit (averaged)',
    [MeasurementType.Other]: 'Other (averaged)',
  },
};

export const MEASUREMENT_PREFIXES: CodeTable<MeasurementPrefix> = {
  name: 'MeasurementPrefix',
  description: 'Register `measurementPrefix`: the power of ten of the unit (3 = kilo: kWh, kW).',
  values: {
    [MeasurementPrefix.Milli]: 'milli (10^-3)',
    [MeasurementPrefix.None]: 'none (10^0)',
    [MeasurementPrefix.Kilo]: 'kilo (10^3)',
    [MeasurementPrefix.Mega]: 'mega (10^6)',
    [MeasurementPrefix.Giga]: 'giga (10^9)',
  },
};

export const CALCULATION_TYPES: CodeTable<CalculationType> = {
  name: 'CalculationType',
  description: 'Virtual register `calculationType` (see docs/virtual-registers.md).',
  values: {
    [CalculationType.Expression]: 'Arithmetic expression over the source registers (`expression`, r0…rN)',
    [CalculationType.Constant]: 'The `constant` value in every interval',
    [CalculationType.Baseline]: 'A baseline of the first source register (`baselineAlgorithmType`)',
  },
};

const BASELINE_DESCRIPTIONS: Record<BaselineAlgorithm, string> = {
  [BaselineAlgorithm.Zero]: 'Zero in every interval',
  [BaselineAlgorithm.PreviousDay]: 'The same local interval on the previous day',
  [BaselineAlgorithm.High4Of5]: 'High 4 of the 5 most recent similar days',
  [BaselineAlgorithm.High4Of5Additive]: 'High 4 of 5, additive same-day adjustment (capped)',
  [BaselineAlgorithm.High4Of5Multiplicative]: 'High 4 of 5, multiplicative same-day adjustment (capped)',
  [BaselineAlgorithm.Average10Of10]: 'Average of the 10 most recent similar days',
  [BaselineAlgorithm.Average10Of10Additive]: '10 of 10, additive same-day adjustment (capped)',
  [BaselineAlgorithm.Average10Of10Multiplicative]: '10 of 10, multiplicative same-day adjustment (capped)',
  [BaselineAlgorithm.PjmCustomerBaseline]: 'PJM Customer Baseline: weekdays High 4 of 5, Saturdays and Sundays/holidays High 2 of 3 over the 45 days before, low-usage days left out, symmetric additive adjustment',
  [BaselineAlgorithm.Caiso10In10]: 'CAISO 10-in-10: weekdays 10 of 10, weekend days/holidays 4 of 4 over the 45 days before, load point adjustment within ±20%',
  [BaselineAlgorithm.Caiso10In10Unadjusted]: 'CAISO 10-in-10 without the load point adjustment',
};

export const RESOURCE_TYPES: CodeTable<ResourceType> = {
  name: 'ResourceType',
  description: 'Grid resource `type`.',
  values: {
    [ResourceType.FlexibleConsumption]: 'Flexible consumption (load that can be shifted or curtailed)',
    [ResourceType.Production]: 'Production (generator)',
    [ResourceType.Storage]: 'Storage (battery, heat store)',
    [ResourceType.Aggregate]: 'Aggregate of several units',
    [ResourceType.Other]: 'Other',
  },
};

export const REGULATION_TYPES: CodeTable<RegulationType> = {
  name: 'RegulationType',
  description: 'Grid resource `regulationType`: the direction(s) it can regulate; decides the sign of a delivered quantity.',
  values: {
    [RegulationType.Up]: 'Up: less consumption or more production (delivered = reference − actual)',
    [RegulationType.Down]: 'Down: more consumption or less production (delivered = actual − reference)',
    [RegulationType.UpAndDown]: 'Both directions (the direction comes from the product traded)',
  },
};

export const PRODUCT_TYPES: CodeTable<ProductType> = {
  name: 'ProductType',
  description: '`productType` of orders, offers and transactions, and `allowedProducts` of grid resources.',
  values: {
    [ProductType.FlexibilityUp]: 'Flexibility, upward (activated energy)',
    [ProductType.FlexibilityDown]: 'Flexibility, downward (activated energy)',
    [ProductType.AvailabilityUp]: 'Availability, upward (reserved capacity)',
    [ProductType.AvailabilityDown]: 'Availability, downward (reserved capacity)',
  },
};

export const TIME_RESOLUTIONS: CodeTable<TimeResolution> = {
  name: 'TimeResolution',
  description: 'Market zone `timeResolution`: order and offer periods start and end on this grid (UTC).',
  values: {
    [TimeResolution.QuarterHour]: '15 minutes',
    [TimeResolution.HalfHour]: '30 minutes',
    [TimeResolution.Hour]: '1 hour',
    [TimeResolution.Day]: '1 day (UTC midnight)',
  },
};

export const CLEARING_STATUSES: CodeTable<ClearingStatus> = {
  name: 'ClearingStatus',
  description: '`clearingStatus` of availability orders (1–4, 7) and availability offers (1, 5–7).',
  values: {
    [ClearingStatus.Open]: 'Open: taking offers (until expiresAt)',
    [ClearingStatus.Cleared]: 'Cleared: the ordered quantity was covered',
    [ClearingStatus.PartiallyCleared]: 'Partially cleared: offers covered only part of the quantity',
    [ClearingStatus.NotCleared]: 'Not cleared: no usable offer',
    [ClearingStatus.Accepted]: 'Offer accepted: it became an availability transaction',
    [ClearingStatus.Rejected]: 'Offer rejected at clearing',
    [ClearingStatus.Cancelled]: 'Cancelled by its owner before clearing',
  },
};

export const DELIVERY_VALIDATION_STATUSES: CodeTable<DeliveryValidationStatus> = {
  name: 'DeliveryValidationStatus',
  description: '`deliveryValidationStatus` of transactions.',
  values: {
    [DeliveryValidationStatus.Pending]: 'Pending: the delivery period (plus the validation delay) has not passed yet',
    [DeliveryValidationStatus.Validated]: 'Validated from meter data; figures filled in',
    [DeliveryValidationStatus.MissingActualData]: 'The actual register lacks readings for the period (validation is retried)',
    [DeliveryValidationStatus.MissingReferenceData]: 'The reference lacks readings for the period (validation is retried)',
    [DeliveryValidationStatus.NotMeasurable]: 'Cannot be measured: no actual register, no reference (nor zero reference), a register that measures neither energy nor power, a resolution that does not fit the period, or a virtual reference that cannot be computed (retried)',
  },
};

/** The numbers and definitions belong to the virtual-register library (workers/virtual). */
export const BASELINE_ALGORITHMS: CodeTable = {
  name: 'BaselineAlgorithmType',
  description: 'Virtual register `baselineAlgorithmType` (definitions: docs/virtual-registers.md).',
  values: Object.fromEntries(Object.keys(BASELINE_SPECS).map((code) => [code, BASELINE_DESCRIPTIONS[Number(code) as BaselineAlgorithm]])),
};

/** JSON Schema for a code: an integer from the table, documented per value. The title names the
 * table's OpenAPI component, which the document refers to wherever the code is used. */
export function codeSchema(table: CodeTable): Record<string, unknown> {
  const values = Object.keys(table.values).map(Number);
  return {
    title: table.name,
    type: 'integer',
    enum: values,
    description: `${table.description} ${values.map((v) => `${v} = ${table.values[v]}`).join('; ')}.`,
  };
}

/** Markdown table of a code table (docs/codes.md). */
export function codeTableMarkdown(table: CodeTable): string {
  return ['| code | meaning |', '|---|---|', ...Object.entries(table.values).map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

/** Every code table, for the OpenAPI components and docs/codes.md. */
export const CODE_TABLES: CodeTable[] = [
  METER_TYPES,
  REGISTER_TYPES,
  MEASUREMENT_TYPES,
  MEASUREMENT_PREFIXES,
  CALCULATION_TYPES,
  BASELINE_ALGORITHMS,
  RESOURCE_TYPES,
  REGULATION_TYPES,
  PRODUCT_TYPES,
  TIME_RESOLUTIONS,
  CLEARING_STATUSES,
  DELIVERY_VALIDATION_STATUSES,
];
