// The demo's meter data: a year of 15-minute readings per register, made from simple physical
// profiles in each register's local time (outdoor temperature, heat pumps, a battery's schedule,
// EV charging sessions, a feeder carrying them all), with a daily and a weekly rhythm, gaps where
// meters were silent, and the deliveries the market plan asks for. Deterministic: noise comes from
// a hash of (series, index), so the same moment gives the same readings, in any order.
import { DAY, HOUR, ZoneClock } from './clock.ts';
import type { Delivery } from './plan.ts';
import { AMSTERDAM, CHARGERS, HELSINKI, HOMES, type MeterPlan, type RegisterPlan, type ResourceKey } from './world.ts';

const QUARTER = 900_000;

/** A register's readings: `values[i]` covers [start + i·step, start + (i+1)·step); NaN = no reading. */
export interface SeriesData {
  start: number;
  step: number;
  values: Float64Array;
}

/** Uniform in [0, 1) from two integers (a 32-bit integer hash; no state, so order does not matter). */
export function noise(key: number, i: number): number {
  let h = Math.imul(key ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(i + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const bump = (x: number, centre: number, width: number) => Math.exp(-((x - centre) ** 2) / (2 * width * width));
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** A quarter-hour grid of local days [from, to) of a zone. */
class Grid {
  readonly start: number;
  readonly count: number;
  private localTimes?: ReturnType<ZoneClock['local']>[];

  constructor(
    readonly clock: ZoneClock,
    fromDay: number,
    toDay: number,
  ) {
    this.start = clock.at(fromDay, 0);
    this.count = (clock.at(toDay, 0) - this.start) / QUARTER;
  }

  at(i: number): number {
    return this.start + i * QUARTER;
  }

  /** Local time at the middle of quarter i. */
  local(i: number) {
    this.localTimes ??= Array.from({ length: this.count }, (_, k) => this.clock.local(this.at(k) + QUARTER / 2));
    return this.localTimes[i]!;
  }

  index(instant: number): number {
    return Math.round((instant - this.start) / QUARTER);
  }
}

export class DemoData {
  private readonly ams: Grid;
  private readonly hel: Grid;
  private readonly cache = new Map<string, Float64Array>();
  private deliveries: Delivery[] = [];

  constructor(
    readonly readingsFrom: number,
    readonly readingsTo: number,
    readonly today: number,
  ) {
    this.ams = new Grid(new ZoneClock(AMSTERDAM), readingsFrom, readingsTo);
    this.hel = new Grid(new ZoneClock(HELSINKI), readingsFrom, readingsTo);
  }

  /** The meter data with these deliveries in it (the undisturbed data before). */
  withDeliveries(deliveries: Delivery[]): this {
    this.deliveries = deliveries;
    this.cache.clear();
    return this;
  }

  /** kWh a resource would use in [start, end) without a delivery: what the plan sizes orders by. */
  expectedEnergy(resource: ResourceKey, start: number, end: number): number {
    const series = resource === 'pool' ? this.pool() : resource === 'depot' ? this.depot('ams') : this.batteryNet();
    let sum = 0;
    for (let i = this.ams.index(start); i < this.ams.index(end); i += 1) sum += series[i]!;
    return sum;
  }

  /** The readings of a measured register, as POST /api/readings will carry them. */
  series(meter: MeterPlan, register: RegisterPlan): SeriesData {
    const s = register.series!;
    const grid = meter.timeZone === HELSINKI ? this.hel : this.ams;
    switch (s.kind) {
      case 'temperature':
        return this.temperature();
      case 'feeder':
        return { start: grid.start, step: QUARTER, values: this.withFeederGaps(this.feeder()) };
      case 'voltage':
        return { start: grid.start, step: QUARTER, values: this.voltage() };
      case 'home':
        return { start: grid.start, step: QUARTER, values: this.withHomeGaps(s.index, this.home(s.index)) };
      case 'pool':
        return { start: grid.start, step: QUARTER, values: this.pool() };
      case 'battery':
        return { start: grid.start, step: QUARTER, values: s.part === 'net' ? this.batteryNet() : this.batteryPart(s.part) };
      case 'charger':
        return { start: grid.start, step: QUARTER, values: this.withChargerGaps(s.depot, s.index, this.charger(s.depot, s.index)) };
      case 'depot':
        return { start: grid.start, step: QUARTER, values: this.depot(s.depot) };
    }
  }

  /** The battery's planned net energy over [start, end): its reference readings. */
  schedule(start: number, end: number): SeriesData {
    const from = this.ams.index(start);
    const values = new Float64Array(this.ams.index(end) - from);
    for (let k = 0; k < values.length; k += 1) values[k] = round3(this.batteryPlanKw(from + k) / 4);
    return { start, step: QUARTER, values };
  }

  /** The feeder's readings of one day as first sent, with a meter glitch the correction replaces. */
  glitchDay(): { day: number; first: SeriesData; corrected: SeriesData } {
    const day = this.today - 10 * DAY;
    const from = this.ams.index(this.ams.clock.at(day, 0));
    const to = this.ams.index(this.ams.clock.at(day + DAY, 0));
    const feeder = this.feeder();
    const corrected = feeder.slice(from, to);
    const first = corrected.slice();
    for (const k of [40, 41, 42]) first[k] = round3(first[k]! * 10); // 10:00–10:45 local, a decimal slip
    return { day, first: { start: this.ams.at(from), step: QUARTER, values: first }, corrected: { start: this.ams.at(from), step: QUARTER, values: corrected } };
  }

  // Weather ------------------------------------------------------------------------------------

  /** Outdoor °C at local time: a seasonal curve, a daily swing, and weather from day to day. */
  private outdoor(zone: 'ams' | 'hel', local: { hour: number; dayOfYear: number }, dayIndex: number): number {
    const season = zone === 'ams' ? 10.5 - 7.5 * Math.cos((2 * Math.PI * (local.dayOfYear - 20)) / 365.25) : 5.5 - 11.5 * Math.cos((2 * Math.PI * (local.dayOfYear - 25)) / 365.25);
    const swing = 3.5 * Math.sin((2 * Math.PI * (local.hour - 9)) / 24);
    const key = zone === 'ams' ? 11 : 12;
    const t = dayIndex + local.hour / 24;
    const d0 = Math.floor(t);
    const weather = (noise(key, d0) - 0.5) * 7 * (1 - (t - d0)) + (noise(key, d0 + 1) - 0.5) * 7 * (t - d0);
    return season + swing + weather;
  }

  private temperatureAt(grid: Grid, i: number): number {
    const local = grid.local(i);
    return this.outdoor(grid === this.hel ? 'hel' : 'ams', local, Math.floor((grid.at(i) - this.readingsFrom) / DAY));
  }

  /** Hourly outdoor temperature at the substation, one day missing (a sensor fault). */
  private temperature(): SeriesData {
    const grid = this.ams;
    const hours = grid.count / 4;
    const values = new Float64Array(hours);
    const silentFrom = grid.clock.at(this.today - 60 * DAY, 0);
    for (let h = 0; h < hours; h += 1) {
      const at = grid.at(h * 4);
      values[h] = at >= silentFrom && at < silentFrom + DAY ? NaN : Math.round((this.temperatureAt(grid, h * 4 + 2) + (noise(13, h) - 0.5) * 0.6) * 10) / 10;
    }
    return { start: grid.start, step: HOUR, values };
  }

  // Heat pumps ---------------------------------------------------------------------------------

  /** A home's heat pump, kWh per quarter, before any delivery. */
  private homeUndisturbed(index: number): Float64Array {
    return this.memo(`home-u-${index}`, () => {
      const grid = this.ams;
      const size = 0.75 + 0.5 * noise(20, index);
      const shift = (index % 4) * 0.25;
      const out = new Float64Array(grid.count);
      for (let i = 0; i < grid.count; i += 1) {
        const { hour, weekday } = grid.local(i);
        const t = this.temperatureAt(grid, i);
        let kw = size * 0.11 * Math.max(0, 17 - t);
        if (hour >= 23 || hour < 5) kw *= 0.7;
        else if (hour >= 6 && hour < 9) kw *= 1.3;
        const weekend = weekday >= 5;
        const morning = (weekend ? 8 : 6.5) + shift;
        const evening = 19 + shift;
        if ((hour >= morning && hour < morning + 0.75) || (hour >= evening && hour < evening + 0.75)) kw += 2 * size;
        kw = kw * (1 + (noise(21 + index, i) - 0.5) * 0.3) + 0.03;
        out[i] = kw / 4;
      }
      return out;
    });
  }

  /** Share of each pool quarter taken away by deliveries (and given back in the two hours after). */
  private poolAdjustment(): Float64Array {
    return this.memo('pool-adjust', () => {
      const grid = this.ams;
      const total = new Float64Array(grid.count);
      for (let h = 0; h < HOMES; h += 1) {
        const home = this.homeUndisturbed(h);
        for (let i = 0; i < grid.count; i += 1) total[i]! += home[i]!;
      }
      const factor = new Float64Array(grid.count).fill(1);
      for (const d of this.deliveries.filter((x) => x.resource === 'pool')) {
        const from = grid.index(d.start);
        const to = grid.index(d.end);
        let energy = 0;
        for (let i = from; i < to; i += 1) energy += total[i]!;
        const cut = Math.min(0.95, (d.quantity * d.factor) / energy);
        for (let i = from; i < to; i += 1) factor[i] = 1 - cut;
        // The heat pumps catch up afterwards: the energy held back spread over eight quarters.
        const owed = d.quantity * d.factor;
        for (let i = to; i < to + 8 && i < grid.count; i += 1) factor[i] = 1 + owed / 8 / total[i]!;
      }
      return factor;
    });
  }

  private home(index: number): Float64Array {
    return this.memo(`home-${index}`, () => {
      const raw = this.homeUndisturbed(index);
      const adjust = this.poolAdjustment();
      return raw.map((v, i) => round3(v * adjust[i]!));
    });
  }

  /** The pool's own meter: the homes together, measured on one meter (no gaps). */
  private pool(): Float64Array {
    return this.memo('pool', () => {
      const out = new Float64Array(this.ams.count);
      for (let h = 0; h < HOMES; h += 1) {
        const home = this.home(h);
        for (let i = 0; i < out.length; i += 1) out[i]! += home[i]!;
      }
      return out.map(round3);
    });
  }

  // Battery ------------------------------------------------------------------------------------

  /** The battery's plan, kW (+ charging, − discharging): cheap night energy in, evening peak out. */
  private batteryPlanKw(i: number): number {
    const { hour, weekday, dayOfYear } = this.ams.local(i);
    const summer = 0.5 - 0.5 * Math.cos((2 * Math.PI * (dayOfYear - 10)) / 365.25);
    if (weekday < 5) {
      if (hour < 6) return 55;
      if (hour >= 11 && hour < 15) return 40 * summer;
      if (hour >= 16 && hour < 20) return -70;
      return hour >= 21 ? 8 : 0;
    }
    if (hour >= 1 && hour < 5) return 40;
    if (hour >= 11 && hour < 15) return 35 * summer;
    if (hour >= 18 && hour < 20) return -50;
    return 0;
  }

  private batteryNet(): Float64Array {
    return this.memo('battery-net', () => {
      const grid = this.ams;
      const out = new Float64Array(grid.count);
      for (let i = 0; i < grid.count; i += 1) out[i] = this.batteryPlanKw(i) / 4 + (noise(30, i) - 0.5) * 0.4;
      for (const d of this.deliveries.filter((x) => x.resource === 'battery')) {
        const from = grid.index(d.start);
        const to = grid.index(d.end);
        // Delivered against the plan (the reference): exactly, apart from the meter's own noise.
        for (let i = from; i < to; i += 1) out[i] = this.batteryPlanKw(i) / 4 + ((d.direction === 'up' ? -1 : 1) * d.quantity * d.factor) / (to - from);
      }
      return out.map(round3);
    });
  }

  private batteryPart(part: 'import' | 'export'): Float64Array {
    return this.batteryNet().map((v) => round3(part === 'import' ? Math.max(0, v) : Math.max(0, -v)));
  }

  // EV depots ----------------------------------------------------------------------------------

  /** Charging sessions of a charger, kWh per quarter; `cut` is the share held back per quarter. */
  private chargerEnergy(depot: 'ams' | 'hel', index: number, cut?: Float64Array): Float64Array {
    const grid = depot === 'ams' ? this.ams : this.hel;
    const key = (depot === 'ams' ? 40 : 60) + index;
    const out = new Float64Array(grid.count);
    let owed = 0;
    for (let i = 0; i < grid.count; i += 1) {
      const { hour, weekday, dayOfYear } = grid.local(i);
      const d = Math.floor((grid.at(i) - this.readingsFrom) / DAY);
      const weekend = weekday >= 5;
      const cold = depot === 'hel' ? 0.5 + 0.5 * Math.cos((2 * Math.PI * (dayOfYear - 25)) / 365.25) : 0;
      // Vans come back in the evening (weekdays) or now and then around noon (weekends).
      const arrival = weekend ? 10 + 2 * noise(key, d * 3) : 16.75 + index * 0.33 + (noise(key, d * 3 + 1) - 0.5);
      const comes = weekend ? noise(key, d * 3 + 2) < 0.45 : noise(key, d * 3 + 2) < 0.93;
      if (comes && hour >= arrival && hour < arrival + 0.25) owed += (weekend ? 15 + 15 * noise(key, d * 5) : 22 + 26 * noise(key, d * 5 + 1)) * (1 + 0.4 * cold);
      const full = Math.min(owed, 11 / 4);
      const e = full * (1 - (cut?.[i] ?? 0));
      out[i] = round3(e);
      owed -= e;
    }
    return out;
  }

  private depotCut(): Float64Array {
    return this.memo('depot-cut', () => {
      const cut = new Float64Array(this.ams.count);
      const chargers = Array.from({ length: CHARGERS }, (_, j) => this.chargerEnergy('ams', j));
      for (const d of this.deliveries.filter((x) => x.resource === 'depot')) {
        const from = this.ams.index(d.start);
        const to = this.ams.index(d.end);
        let charging = 0;
        for (let i = from; i < to; i += 1) for (const c of chargers) charging += c[i]!;
        const share = Math.min(0.95, (d.quantity * d.factor) / Math.max(charging, 1e-9));
        for (let i = from; i < to; i += 1) cut[i] = share;
      }
      return cut;
    });
  }

  private charger(depot: 'ams' | 'hel', index: number): Float64Array {
    return this.memo(`charger-${depot}-${index}`, () => this.chargerEnergy(depot, index, depot === 'ams' ? this.depotCut() : undefined));
  }

  /** The depot's main meter: its chargers, lights, offices and (in Helsinki) heating. */
  private depot(depot: 'ams' | 'hel'): Float64Array {
    return this.memo(`depot-${depot}`, () => {
      const grid = depot === 'ams' ? this.ams : this.hel;
      const out = new Float64Array(grid.count);
      for (let j = 0; j < CHARGERS; j += 1) {
        const c = this.charger(depot, j);
        for (let i = 0; i < out.length; i += 1) out[i]! += c[i]!;
      }
      for (let i = 0; i < out.length; i += 1) {
        const { hour, weekday } = grid.local(i);
        const open = weekday < 5 && hour >= 7 && hour < 18;
        const heating = depot === 'hel' ? Math.max(0, 12 - this.temperatureAt(grid, i)) * 0.6 : 0;
        out[i] = round3(out[i]! + ((open ? 6 : 2) + heating + noise(depot === 'ams' ? 50 : 70, i) * 0.8) / 4);
      }
      return out;
    });
  }

  // Feeder -------------------------------------------------------------------------------------

  /** The substation's feeder, kWh per quarter: homes and businesses, plus the pool, the battery
   * and the Amsterdam depot, which sit behind it. */
  private feeder(): Float64Array {
    return this.memo('feeder', () => {
      const grid = this.ams;
      const pool = this.pool();
      const battery = this.batteryNet();
      const depot = this.depot('ams');
      const out = new Float64Array(grid.count);
      for (let i = 0; i < grid.count; i += 1) {
        const { hour, weekday } = grid.local(i);
        const t = this.temperatureAt(grid, i);
        const weekend = weekday >= 5;
        const winter = Math.max(0, 15 - t) * 35;
        const business = weekend ? 120 * bump(hour, 13, 3) : 420 * bump(hour, 12.5, 3.2);
        const homes = 260 * bump(hour, weekend ? 9.5 : 7.5, 1.2) + 820 * bump(hour, 19, 2) - 420 * bump(hour, 3.5, 2.2);
        const kw = (1650 + winter + business + homes) * (1 + (noise(80, i) - 0.5) * 0.03);
        out[i] = round3(kw / 4 + pool[i]! + battery[i]! + depot[i]!);
      }
      return out;
    });
  }

  /** Busbar voltage, V: sags as the feeder loads up. */
  private voltage(): Float64Array {
    const feeder = this.feeder();
    return feeder.map((e, i) => Math.round((233 - 0.0028 * (e * 4 - 2000) + (noise(81, i) - 0.5) * 0.8) * 10) / 10);
  }

  // Gaps ---------------------------------------------------------------------------------------

  /** Thirty quarter hours the feeder's meter did not deliver, scattered over the older months. */
  private withFeederGaps(values: Float64Array): Float64Array {
    const out = values.slice();
    const from = this.ams.index(this.ams.clock.at(this.readingsFrom + 20 * DAY, 0));
    const to = this.ams.index(this.ams.clock.at(this.today - 40 * DAY, 0));
    for (let k = 0; k < 30; k += 1) out[from + Math.floor(noise(90, k) * (to - from))] = NaN;
    return out;
  }

  /** Home 03's meter lost its connection for two days. */
  private withHomeGaps(index: number, values: Float64Array): Float64Array {
    if (index !== 2) return values;
    const out = values.slice();
    const clock = this.ams.clock;
    out.fill(NaN, this.ams.index(clock.at(this.today - 120 * DAY, 14)), this.ams.index(clock.at(this.today - 118 * DAY, 9, 15)));
    return out;
  }

  /** Charger 6 in Helsinki was installed a few months into the year. */
  private withChargerGaps(depot: 'ams' | 'hel', index: number, values: Float64Array): Float64Array {
    if (depot !== 'hel' || index !== CHARGERS - 1) return values;
    const out = values.slice();
    out.fill(NaN, 0, this.hel.index(this.hel.clock.at(this.today - 250 * DAY, 0)));
    return out;
  }

  private memo(key: string, make: () => Float64Array): Float64Array {
    let v = this.cache.get(key);
    if (!v) {
      v = make();
      this.cache.set(key, v);
    }
    return v;
  }
}
