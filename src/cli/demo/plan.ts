// When things happen in the demo world: the traded month with its orders, acceptances and
// deliveries, and the VTN's programs, VENs and events, all placed relative to one instant (the
// moment of seeding), so the console's default periods (the last week, today ± 30 days, the
// coming week) always show them. Pure: no I/O.
import type { VtnScope } from '../../auth/catalogue.ts';
import { ProductType } from '../../codes.ts';
import { DAY, HOUR, ZoneClock } from './clock.ts';
import { AMSTERDAM, HOMES, ZONE_NAME, type OrganizationKey, type ResourceKey } from './world.ts';

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
  vens: { venName: string; scopes: VtnScope[]; resources: string[]; subscribesTo: string[] }[];
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
        // The market's dispatch program: made here so that the battery's VEN subscribes to it
        // before its first transaction is dispatched into it (dispatch finds it by name).
        { programName: ZONE_NAME, programLongName: `Flexibility bought in market zone ${ZONE_NAME}`, payloadType: 'DISPATCH_SETPOINT_RELATIVE', units: 'KW' },
      ],
      vens: [
        { venName: 'ven-heat-pumps', scopes: ['read_all', 'write_reports', 'write_subscriptions'], resources: Array.from({ length: HOMES }, (_, i) => `heat-pump-${String(i + 1).padStart(2, '0')}`), subscribesTo: ['evening-peak'] },
        { venName: 'ven-battery', scopes: ['read_all', 'write_reports', 'write_subscriptions'], resources: ['battery-zeeburg'], subscribesTo: ['day-ahead-price', ZONE_NAME] },
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
