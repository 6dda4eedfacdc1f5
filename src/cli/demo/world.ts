// The demo world as data: who takes part, which meters and registers they have, which resources
// trade in the market zone and which substations they relieve. When things happen (the traded
// month, the VTN's events) is plan.ts; the meter data is profiles.ts; seed.ts makes it all real
// through the public API. Pure: no I/O.
import type { Feature, Permission } from '../../auth/catalogue.ts';
import { BaselineAlgorithm, MeasurementPrefix, MeasurementType, ProductType, RegisterType, RegulationType, ResourceType } from '../../codes.ts';

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

/** The market zone; the provider's VTN dispatches its transactions in a program of this name. */
export const ZONE_NAME = 'NL North';

/** The grid resource bound to the VEN resource controlling it, whose whole loop can be followed:
 * its transactions are dispatched to the VEN as events, and the VEN (not the meter) reports its
 * usage during them, which delivery validation reads (docs/flexibility-loop.md). */
export const LOOP = { resource: 'battery' as ResourceKey, ven: 'ven-battery', venResource: 'battery-zeeburg', register: 'PF-BAT-ZEEBURG/net' };

export const SUBSTATIONS = [
  { name: 'Nord 10 kV', impacts: { pool: 0.9, battery: 1, depot: 0.3 } },
  { name: 'Sloterdijk 10 kV', impacts: { depot: 1, pool: 0.2 } },
] as const;
