// The demo world as data: who takes part, which meters and registers they have, which resources
// trade in the market zone, which days are traded, and what the VTN holds. Everything is placed
// relative to one instant (the moment of seeding), so the console's default periods (the last
// week, today ± 30 days, the coming week) always show it. Pure: no I/O; seed.ts makes it real
// through the public API, profiles.ts makes its meter data.
import type { Feature, Permission, VtnScope } from '../../auth/catalogue.ts';
import { BaselineAlgorithm, MeasurementPrefix, MeasurementType, ProductType, RegisterType, RegulationType, ResourceType } from '../../codes.ts';
import { DAY, HOUR, ZoneClock } from './clock.ts';

export const AMSTERDAM = 'Europe/Amsterdam';
export const HELSINKI = 'Europe/Helsinki';

export type OrganizationKey = 'operator' | 'polder' | 'aurora';

export interface OrganizationPlan {
  key: OrganizationKey;
  name: string;
  features: Feature[];
  /** The role of its API client (one client per organization). */
  permissions: Permission[];
  clientName: string;
}

export const ORGANIZATIONS: OrganizationPlan[] = [
  {
    key: 'operator',
    name: 'Noordnet (grid operator)',
    features: ['Grid', 'DecisionSupport', 'Settlements'],
    permissions: ['Order.Organization.ReadWrite', 'Meter.Organization.ReadWrite', 'Resource.Organization.Read', 'Organization.Organization.Read'],
    clientName: 'noordnet-trading',
  },
  {
    key: 'polder',
    name: 'Polder Flex (heat pumps and a battery)',
    features: ['Grid', 'ResourceManagement', 'Settlements', 'OpenADR'],
    permissions: ['Order.Organization.ReadWrite', 'Meter.Organization.ReadWrite', 'Resource.Organization.ReadWrite', 'Planning.Organization.ReadWrite', 'Organization.Organization.Read'],
    clientName: 'polder-flex-platform',
  },
  {
    key: 'aurora',
    name: 'Aurora Charge (EV depots)',
    features: ['Grid', 'ResourceManagement', 'Settlements'],
    permissions: ['Order.Organization.ReadWrite', 'Meter.Organization.ReadWrite', 'Resource.Organization.ReadWrite', 'Planning.Organization.ReadWrite', 'Organization.Organization.Read'],
    clientName: 'aurora-charge-backend',
  },
];

/** How a register's readings are made (profiles.ts). */
export type Series =
  | { kind: 'feeder' }
  | { kind: 'voltage' }
  | { kind: 'temperature' }
  | { kind: 'home'; index: number }
  | { kind: 'pool' }
  | { kind: 'battery'; part: 'import' | 'export' | 'net' }
  | { kind: 'charger'; depot: 'ams' | 'hel'; index: number }
  | { kind: 'depot'; depot: 'ams' | 'hel' };

export interface RegisterPlan {
  externalId: string;
  name: string;
  type: RegisterType;
  measurementType: MeasurementType;
  measurementPrefix: MeasurementPrefix;
  /** Seconds between readings. */
  resolution: number;
  series?: Series;
  /** A virtual register: `expression` over `sources` (externalIds on the same meter, or META/REG), or a baseline of `sources[0]`. */
  virtual?: { expression: string; sources: string[] } | { baseline: BaselineAlgorithm; sources: string[] };
  /** Readings posted as a resource's reference (POST /api/grid/resource/{id}/readings/reference), not by the meter. */
  reference?: true;
}

export interface MeterPlan {
  externalId: string;
  name: string;
  owner: OrganizationKey;
  timeZone: string;
  longitude: string;
  latitude: string;
  registers: RegisterPlan[];
}

const energy = (externalId: string, name: string, series: Series, type = RegisterType.Import): RegisterPlan => ({
  externalId,
  name,
  type,
  measurementType: MeasurementType.ActiveEnergy,
  measurementPrefix: MeasurementPrefix.Kilo,
  resolution: 900,
  series,
});

export const HOMES = 8;
export const CHARGERS = 6;

export const METERS: MeterPlan[] = [
  {
    externalId: 'NN-SUB-NORD',
    name: 'Substation Nord, 10 kV feeder',
    owner: 'operator',
    timeZone: AMSTERDAM,
    longitude: '4.9041',
    latitude: '52.3984',
    registers: [
      energy('import', 'Feeder energy', { kind: 'feeder' }),
      { externalId: 'voltage', name: 'Busbar voltage', type: RegisterType.Other, measurementType: MeasurementType.Voltage, measurementPrefix: MeasurementPrefix.None, resolution: 900, series: { kind: 'voltage' } },
      { externalId: 'temperature', name: 'Outdoor temperature', type: RegisterType.Other, measurementType: MeasurementType.Temperature, measurementPrefix: MeasurementPrefix.None, resolution: 3600, series: { kind: 'temperature' } },
    ],
  },
  ...Array.from({ length: HOMES }, (_, i): MeterPlan => {
    const n = String(i + 1).padStart(2, '0');
    return {
      externalId: `PF-HOME-${n}`,
      name: `Home ${n}, heat pump`,
      owner: 'polder',
      timeZone: AMSTERDAM,
      longitude: (4.88 + i * 0.004).toFixed(4),
      latitude: (52.39 + (i % 3) * 0.003).toFixed(4),
      registers: [energy('import', 'Heat pump energy', { kind: 'home', index: i })],
    };
  }),
  {
    externalId: 'PF-POOL-WEST',
    name: 'Heat pump pool West (aggregation meter)',
    owner: 'polder',
    timeZone: AMSTERDAM,
    longitude: '4.8950',
    latitude: '52.3920',
    registers: [
      energy('import', 'Pool energy', { kind: 'pool' }),
      {
        externalId: 'homes-sum',
        name: 'Sum of the homes (virtual)',
        type: RegisterType.Import,
        measurementType: MeasurementType.ActiveEnergy,
        measurementPrefix: MeasurementPrefix.Kilo,
        resolution: 900,
        virtual: { expression: Array.from({ length: HOMES }, (_, i) => `r${i}`).join(' + '), sources: Array.from({ length: HOMES }, (_, i) => `PF-HOME-${String(i + 1).padStart(2, '0')}/import`) },
      },
      {
        externalId: 'baseline',
        name: 'Pool baseline, high 4 of 5 (virtual)',
        type: RegisterType.Import,
        measurementType: MeasurementType.ActiveEnergy,
        measurementPrefix: MeasurementPrefix.Kilo,
        resolution: 900,
        virtual: { baseline: BaselineAlgorithm.High4Of5, sources: ['import'] },
      },
    ],
  },
  {
    externalId: 'PF-BAT-ZEEBURG',
    name: 'Battery Zeeburg, 500 kWh',
    owner: 'polder',
    timeZone: AMSTERDAM,
    longitude: '4.9610',
    latitude: '52.3680',
    registers: [
      energy('import', 'Charging energy', { kind: 'battery', part: 'import' }),
      energy('export', 'Discharging energy', { kind: 'battery', part: 'export' }, RegisterType.Export),
      energy('net', 'Net energy', { kind: 'battery', part: 'net' }, RegisterType.Net),
      { externalId: 'schedule', name: 'Planned net energy (reference)', type: RegisterType.Net, measurementType: MeasurementType.ActiveEnergy, measurementPrefix: MeasurementPrefix.Kilo, resolution: 900, reference: true },
    ],
  },
  ...(['ams', 'hel'] as const).map(
    (depot): MeterPlan => ({
      externalId: depot === 'ams' ? 'AC-DEPOT-AMS' : 'AC-DEPOT-HEL',
      name: depot === 'ams' ? 'EV depot Sloterdijk, Amsterdam' : 'EV depot Vallila, Helsinki',
      owner: 'aurora',
      timeZone: depot === 'ams' ? AMSTERDAM : HELSINKI,
      longitude: depot === 'ams' ? '4.8378' : '24.9556',
      latitude: depot === 'ams' ? '52.3889' : '60.1947',
      registers: [
        energy('import', 'Depot energy', { kind: 'depot', depot }),
        ...Array.from({ length: CHARGERS }, (_, i) => energy(`charger-${i + 1}`, `Charger ${i + 1} energy`, { kind: 'charger', depot, index: i })),
        ...(depot === 'ams'
          ? [
              {
                externalId: 'baseline',
                name: 'Depot baseline, average of 10 days (virtual)',
                type: RegisterType.Import,
                measurementType: MeasurementType.ActiveEnergy,
                measurementPrefix: MeasurementPrefix.Kilo,
                resolution: 900,
                virtual: { baseline: BaselineAlgorithm.Average10Of10, sources: ['import'] },
              } satisfies RegisterPlan,
            ]
          : []),
      ],
    }),
  ),
];

export type ResourceKey = 'pool' | 'battery' | 'depot';

export interface ResourcePlan {
  key: ResourceKey;
  owner: OrganizationKey;
  name: string;
  type: ResourceType;
  regulationType: RegulationType;
  /** kW. */
  maxQuantity: number;
  allowedProducts: ProductType[];
  /** META/REG of the actual and reference registers. */
  actual: string;
  reference: string;
}

export const RESOURCES: ResourcePlan[] = [
  { key: 'pool', owner: 'polder', name: 'Heat pump pool West', type: ResourceType.FlexibleConsumption, regulationType: RegulationType.Up, maxQuantity: 40, allowedProducts: [ProductType.FlexibilityUp], actual: 'PF-POOL-WEST/import', reference: 'PF-POOL-WEST/baseline' },
  {
    key: 'battery',
    owner: 'polder',
    name: 'Battery Zeeburg',
    type: ResourceType.Storage,
    regulationType: RegulationType.UpAndDown,
    maxQuantity: 250,
    allowedProducts: [ProductType.FlexibilityUp, ProductType.FlexibilityDown, ProductType.AvailabilityUp, ProductType.AvailabilityDown],
    actual: 'PF-BAT-ZEEBURG/net',
    reference: 'PF-BAT-ZEEBURG/schedule',
  },
  { key: 'depot', owner: 'aurora', name: 'EV depot Sloterdijk', type: ResourceType.FlexibleConsumption, regulationType: RegulationType.Up, maxQuantity: 66, allowedProducts: [ProductType.FlexibilityUp, ProductType.AvailabilityUp], actual: 'AC-DEPOT-AMS/import', reference: 'AC-DEPOT-AMS/baseline' },
];

export const SUBSTATIONS = [
  { name: 'Nord 10 kV', impacts: { pool: 0.9, battery: 1, depot: 0.3 } },
  { name: 'Sloterdijk 10 kV', impacts: { depot: 1, pool: 0.2 } },
] as const;

/** A delivery the meter data carries: during [start, end) the resource moves `quantity` kWh × `factor`. */
export interface Delivery {
  resource: ResourceKey;
  start: number;
  end: number;
  /** kWh asked for (the transaction's quantity). */
  quantity: number;
  /** Share of it that the meter data will show delivered (1 = all). */
  factor: number;
  direction: 'up' | 'down';
}

/** One flexibility order of the grid operator and what becomes of it. */
export interface FlexibilityOrderPlan {
  productType: ProductType;
  start: number;
  end: number;
  unitPrice: number;
  /** kWh ordered. */
  quantity: number;
  /** Who accepts how much (none: the order stays open). */
  acceptedBy?: { resource: ResourceKey; quantity: number; factor: number };
  /** Activates the availability bought from this resource. */
  activates?: ResourceKey;
}

export interface DemoPlan {
  /** The moment the plan was made for. */
  now: number;
  /** UTC midnight of `now`. */
  today: number;
  /** Readings run [readingsFrom, readingsTo) in each register's local days. */
  readingsFrom: number;
  readingsTo: number;
  /** The traded month: [start, end), UTC midnights. */
  market: { start: number; end: number };
  availability: { start: number; end: number; expiresAt: number; quantity: number; price: number; offers: { resource: ResourceKey; activationPrice: number; minQuantity: number; maxQuantity: number }[] };
  flexibility: FlexibilityOrderPlan[];
  deliveries: Delivery[];
  vtn: VtnPlan;
}

export interface VtnEventPlan {
  program: string;
  eventName: string;
  start: number;
  /** ISO 8601 duration of each interval. */
  duration: string;
  intervals: { type: string; values: number[] }[];
  targets: string[];
}

export interface VtnPlan {
  owner: OrganizationKey;
  businessLogic: { name: string; scopes: VtnScope[] };
  programs: { programName: string; programLongName: string; payloadType: string; units?: string }[];
  vens: { venName: string; scopes: VtnScope[]; resources: string[]; subscribesTo: string }[];
  events: VtnEventPlan[];
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** The plan for a given moment. Deterministic: the same moment gives the same world. */
export function planFor(now: number, expectedEnergy: (resource: ResourceKey, start: number, end: number) => number): DemoPlan {
  const today = Math.floor(now / DAY) * DAY;
  // Orders must expire in the future and before their period starts, so the traded month lies
  // ahead: it starts at the first UTC midnight at least six hours away.
  const start = Math.ceil((now + 6 * HOUR) / DAY) * DAY;
  const market = { start, end: start + 28 * DAY };
  const ams = new ZoneClock(AMSTERDAM);
  const weekday = (day: number) => (new Date(day).getUTCDay() + 6) % 7;
  /** The first weekday (Mon–Fri) on or after the market's day `n`. */
  const workday = (n: number) => {
    let day = market.start + n * DAY;
    while (weekday(day) > 4) day += DAY;
    return day;
  };
  const window = (day: number, from: number, to: number) => ({ start: ams.at(day, from), end: ams.at(day, to) });

  const flexibility: FlexibilityOrderPlan[] = [];
  // Evening peaks: the operator buys upward flexibility from whoever accepts; the heat pump pool does.
  const poolDays = [1, 4, 8, 11, 15, 18];
  const poolFactors = [0.97, 1.04, 0.9, 0.45, 1.0, 0.93];
  poolDays.forEach((n, i) => {
    const w = window(workday(n), 17, 19);
    const quantity = Math.max(1, round1(0.4 * expectedEnergy('pool', w.start, w.end)));
    flexibility.push({ productType: ProductType.FlexibilityUp, ...w, unitPrice: 0.32, quantity, acceptedBy: { resource: 'pool', quantity, factor: poolFactors[i]! } });
  });
  // Activations of the reserved capacity: the battery's and the EV depot's.
  [2, 9, 16, 23].forEach((n, i) => {
    const w = window(workday(n), 17, 18);
    flexibility.push({ productType: ProductType.FlexibilityUp, ...w, unitPrice: 0.22, quantity: 60, activates: 'battery', acceptedBy: { resource: 'battery', quantity: 60, factor: [1, 0.98, 1, 0.95][i]! } });
  });
  [7, 14].forEach((n, i) => {
    const w = window(workday(n), 18, 19);
    const quantity = Math.max(1, round1(0.4 * expectedEnergy('depot', w.start, w.end)));
    flexibility.push({ productType: ProductType.FlexibilityUp, ...w, unitPrice: 0.28, quantity, activates: 'depot', acceptedBy: { resource: 'depot', quantity, factor: [0.92, 1.02][i]! } });
  });
  // A sunny Sunday noon: downward flexibility (more consumption); the battery charges more.
  let sunday = market.start + 6 * DAY;
  while (weekday(sunday) !== 6) sunday += DAY;
  flexibility.push({ productType: ProductType.FlexibilityDown, ...window(sunday, 12, 14), unitPrice: 0.05, quantity: 80, acceptedBy: { resource: 'battery', quantity: 80, factor: 1 } });
  // Late in the month: one order half taken, two still open.
  const half = window(workday(22), 17, 19);
  const halfQuantity = Math.max(2, round1(0.5 * expectedEnergy('pool', half.start, half.end)));
  flexibility.push({ productType: ProductType.FlexibilityUp, ...half, unitPrice: 0.3, quantity: round1(halfQuantity * 2), acceptedBy: { resource: 'pool', quantity: halfQuantity, factor: 0.96 } });
  for (const n of [24, 25]) flexibility.push({ productType: ProductType.FlexibilityUp, ...window(workday(n), 17, 19), unitPrice: 0.34, quantity: 20 });

  const deliveries: Delivery[] = flexibility.flatMap((o) =>
    o.acceptedBy ? [{ resource: o.acceptedBy.resource, start: o.start, end: o.end, quantity: o.acceptedBy.quantity, factor: o.acceptedBy.factor, direction: o.productType === ProductType.FlexibilityDown ? ('down' as const) : ('up' as const) }] : [],
  );

  // Demand response in the provider's VTN, around today: an evening event every weekday of the
  // coming week and the days before, and hourly prices for yesterday, today and tomorrow.
  const events: VtnEventPlan[] = [];
  for (let day = today - 3 * DAY; day <= today + 7 * DAY; day += DAY) {
    if (weekday(day) > 4) continue;
    events.push({
      program: 'evening-peak',
      eventName: `Evening peak ${new Date(day).toISOString().slice(0, 10)}`,
      start: ams.at(day, 17),
      duration: 'PT1H',
      intervals: [
        { type: 'SIMPLE', values: [1] },
        { type: 'SIMPLE', values: [2] },
      ],
      targets: ['ven-heat-pumps', 'ven-battery'],
    });
  }
  for (let day = today - DAY; day <= today + DAY; day += DAY) {
    events.push({
      program: 'day-ahead-price',
      eventName: `Prices ${new Date(day).toISOString().slice(0, 10)}`,
      start: day,
      duration: 'PT1H',
      intervals: Array.from({ length: 24 }, (_, h) => ({ type: 'PRICE', values: [priceAt(day, h)] })),
      targets: [],
    });
  }

  return {
    now,
    today,
    readingsFrom: today - 365 * DAY,
    readingsTo: market.end + DAY,
    market,
    availability: {
      ...market,
      expiresAt: market.start - 2 * HOUR,
      quantity: 150,
      price: 3.5,
      offers: [
        { resource: 'battery', activationPrice: 0.22, minQuantity: 50, maxQuantity: 100 },
        { resource: 'depot', activationPrice: 0.28, minQuantity: 20, maxQuantity: 66 },
      ],
    },
    flexibility,
    deliveries,
    vtn: {
      owner: 'polder',
      businessLogic: { name: 'polder-flex-dispatch', scopes: ['read_all', 'write_programs', 'write_events', 'write_vens'] },
      programs: [
        { programName: 'evening-peak', programLongName: 'Evening peak relief: lower the load 17:00–19:00 on request', payloadType: 'SIMPLE' },
        { programName: 'day-ahead-price', programLongName: 'Day-ahead energy price, per hour', payloadType: 'PRICE', units: 'EUR/kWh' },
      ],
      vens: [
        { venName: 'ven-heat-pumps', scopes: ['read_all', 'write_reports', 'write_subscriptions'], resources: Array.from({ length: HOMES }, (_, i) => `heat-pump-${String(i + 1).padStart(2, '0')}`), subscribesTo: 'evening-peak' },
        { venName: 'ven-battery', scopes: ['read_all', 'write_reports', 'write_subscriptions'], resources: ['battery-zeeburg'], subscribesTo: 'day-ahead-price' },
      ],
      events,
    },
  };
}

/** A day-ahead price (EUR/kWh) with a morning and an evening peak; varies from day to day. */
export function priceAt(day: number, hour: number): number {
  const n = Math.floor(day / DAY);
  const level = 0.09 + 0.03 * Math.sin(n * 1.7);
  const shape = 0.05 * Math.exp(-((hour - 8) ** 2) / 4) + 0.09 * Math.exp(-((hour - 18) ** 2) / 5) - 0.03 * Math.exp(-((hour - 13) ** 2) / 6);
  return Math.round((level + shape) * 10000) / 10000;
}
