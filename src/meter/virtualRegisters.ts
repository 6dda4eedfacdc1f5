// Virtual registers computed on read (docs/virtual-registers.md). A virtual register is
// computed at its own defaultResolution over the requested period, from its sources bucketed at
// that resolution (each source summed or averaged by its kind; virtual sources computed the same
// way, recursively), in the worker pool: expression, constant or baseline, then optionally the
// running total. The result is returned as stored readings would be, or bucketed like them
// (summed or averaged by the virtual register's own kind) when a resolution is asked for.
//
// updatedAt of a computed value: the latest updatedAt of the source readings it was computed
// from (for a baseline, of its whole history window); for a constant, the time of the request.
import { CalculationType } from '../codes.ts';
import { HttpError } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';
import { seriesJson } from '../store/timeseries/readingJson.ts';
import type { Series, TimeSeriesStore } from '../store/timeseries/types.ts';
import type { WorkerPool } from '../workerPool.ts';
import { baselineHistoryEnd, baselineHistoryStart, baselineReach, excludedDaySet } from '../shared/virtual/baselineDays.ts';
import { previousResetInstant } from '../shared/virtual/runningTotal.ts';
import { dayIndexOfKey, dayIndexToKey, localDayAt, nextLocalMidnight, startOfLocalDay } from '../shared/virtual/time.ts';
import type { VirtualTask } from '../shared/virtual/contract.ts';
import { eventDaysBetween, eventPeriodsBetween, holidaysBetween, registersForRead, type RegisterForRead } from './meterStore.ts';
import { aggregateOf } from './readingsQuery.ts';
import type { ComputedSeries, ReadWindow, VirtualEngine } from './virtualEngine.ts';

const MAX_DEPTH = 8;
/** Most buckets a virtual register is computed over in one request. */
const MAX_NATIVE_BUCKETS = 2_000_000;

interface Computed {
  timestamps: Float64Array;
  values: Float64Array;
  updatedAt: Float64Array;
}

/** Bucket starts covering [start, end) for a resolution (local days for 86400). */
export function bucketStarts(start: number, end: number, resolutionSeconds: number, timeZone: string): Float64Array {
  const out: number[] = [];
  if (resolutionSeconds === 86400) {
    for (let t = startOfLocalDay(start, timeZone); t < end; t = nextLocalMidnight(t, timeZone)) out.push(t);
  } else {
    const step = resolutionSeconds * 1000;
    for (let t = Math.floor(start / step) * step; t < end; t += step) out.push(t);
  }
  return Float64Array.from(out);
}

function bucketEnd(t: number, resolutionSeconds: number, timeZone: string): number {
  return resolutionSeconds === 86400 ? nextLocalMidnight(t, timeZone) : t + resolutionSeconds * 1000;
}

export class VirtualRegisters implements VirtualEngine {
  constructor(
    private readonly db: Queryable,
    private readonly store: TimeSeriesStore,
    private readonly workers: WorkerPool,
  ) {}

  private async run(task: VirtualTask, transfer: ArrayBufferLike[] = []): Promise<Float64Array> {
    const result = await this.workers.run('virtual/task', task, transfer);
    if ('error' in result) throw new HttpError('unprocessable', `The virtual register cannot be computed: ${result.message}`);
    return result.values;
  }

  /** A register (stored or virtual) at `resolution`, aligned with `targets`; NaN where no data. */
  private async seriesOf(register: RegisterForRead, targets: Float64Array, resolution: number, depth: number, asOf: number | undefined): Promise<Computed> {
    if (targets.length === 0) return { timestamps: targets, values: new Float64Array(0), updatedAt: new Float64Array(0) };
    if (register.isVirtual) return this.compute(register, targets, resolution, depth + 1, asOf);
    const end = bucketEnd(targets[targets.length - 1]!, resolution, register.timeZone);
    const [series] = await this.store.bucketSeries({
      registers: [{ id: register.id, aggregate: aggregateOf(register), timeZone: register.timeZone }],
      start: targets[0]!,
      end,
      resolutionSeconds: resolution,
      asOf,
    });
    const values = new Float64Array(targets.length).fill(NaN);
    const updatedAt = new Float64Array(targets.length).fill(NaN);
    const index = new Map<number, number>();
    targets.forEach((t, i) => index.set(t, i));
    for (let k = 0; k < series!.timestamps.length; k += 1) {
      const i = index.get(series!.timestamps[k]!);
      if (i === undefined) continue;
      values[i] = series!.values[k]!;
      updatedAt[i] = series!.updatedAt[k]!;
    }
    return { timestamps: targets, values, updatedAt };
  }

  private async sources(register: RegisterForRead): Promise<RegisterForRead[]> {
    const ids = register.virtualDefinition!.sourceRegisters;
    const found = await registersForRead(this.db, ids);
    const byId = new Map(found.map((r) => [r.id, r]));
    return ids.map((id) => {
      const source = byId.get(id);
      if (!source) throw new HttpError('unprocessable', `Source register ${id} of virtual register ${register.id} no longer exists`);
      return source;
    });
  }

  /** The virtual register's own values at `resolution` for the bucket starts `targets`. */
  /** With `asOf`, from the sources as recorded at that instant (the definitions are today's). */
  private async compute(register: RegisterForRead, targets: Float64Array, resolution: number, depth: number, asOf: number | undefined): Promise<Computed> {
    if (depth > MAX_DEPTH) throw new HttpError('unprocessable', `Virtual registers nest deeper than ${MAX_DEPTH} levels`);
    const def = register.virtualDefinition!;
    const timeZone = def.timeZone ?? register.timeZone;
    // With a daily restart of the running total, start computing at the restart before the period.
    let computeTargets = targets;
    if (def.sumPreviousValues && def.timeOfDay && targets.length > 0) {
      const from = previousResetInstant(targets[0]!, def.timeOfDay, timeZone);
      if (from < targets[0]!) computeTargets = Float64Array.from([...bucketStarts(from, targets[0]!, resolution, timeZone), ...targets]);
    }
    const n = computeTargets.length;
    let values: Float64Array;
    let updatedAt: Float64Array;
    switch (def.calculationType) {
      case CalculationType.Constant:
        values = await this.run({ kind: 'constant', length: n, value: def.constant ?? 0 });
        updatedAt = new Float64Array(n).fill(asOf ?? Date.now());
        break;
      case CalculationType.Expression: {
        const inputs = await Promise.all((await this.sources(register)).map((s) => this.seriesOf(s, computeTargets, resolution, depth, asOf)));
        values = await this.run(
          { kind: 'expression', ast: register.expressionAst as never, inputs: inputs.map((i) => i.values), length: n },
          inputs.map((i) => i.values.buffer),
        );
        updatedAt = new Float64Array(n).fill(NaN);
        for (const input of inputs) for (let i = 0; i < n; i += 1) if (!(input.updatedAt[i]! <= updatedAt[i]!)) updatedAt[i] = input.updatedAt[i]!;
        break;
      }
      case CalculationType.Baseline: {
        const [source] = await this.sources(register);
        const algorithm = def.baselineAlgorithmType!;
        // A target day's baseline depends on the days before it only: event days and holidays are
        // read from as far back as any search reaches, up to the last target day and never after.
        const reach = baselineReach(computeTargets, timeZone);
        const [excludedDays, eventPeriods, holidays] = await Promise.all([
          eventDaysBetween(this.db, source!.id, dayIndexToKey(reach.fromDay), dayIndexToKey(reach.lastDay)),
          eventPeriodsBetween(this.db, source!.id, localDayAt(reach.fromDay, timeZone).start, localDayAt(reach.lastDay, timeZone).end),
          holidaysBetween(this.db, register.id, dayIndexToKey(reach.fromDay), dayIndexToKey(reach.lastDay)),
        ]);
        const excluded = excludedDaySet(excludedDays.map(dayIndexOfKey), eventPeriods, timeZone);
        const historyStart = baselineHistoryStart(algorithm, computeTargets, reach, excluded);
        const historyEnd = Math.max(baselineHistoryEnd(reach, timeZone), bucketEnd(computeTargets[n - 1]!, resolution, timeZone));
        const historyTargets = bucketStarts(historyStart, historyEnd, resolution, timeZone);
        const history = await this.seriesOf(source!, historyTargets, resolution, depth, asOf);
        values = await this.run({
          kind: 'baseline',
          algorithm,
          targetTimestamps: computeTargets,
          resolutionSeconds: resolution,
          timeZone,
          history: { timestamps: history.timestamps, values: history.values },
          excludedDays,
          eventPeriods,
          holidays,
        });
        let latest = NaN;
        for (const u of history.updatedAt) if (!(u <= latest)) latest = u;
        updatedAt = new Float64Array(n).fill(latest);
        break;
      }
      default:
        throw new HttpError('unprocessable', `Unknown calculationType ${def.calculationType}`);
    }
    if (def.sumPreviousValues) {
      values = await this.run({ kind: 'runningTotal', timestamps: computeTargets, values, ...(def.timeOfDay ? { resetTimeOfDay: def.timeOfDay, timeZone } : {}) });
    }
    const skip = n - targets.length;
    return { timestamps: targets, values: values.subarray(skip), updatedAt: updatedAt.subarray(skip) };
  }

  async series(register: RegisterForRead, start: number, end: number, asOf?: number): Promise<ComputedSeries> {
    const native = register.defaultResolution;
    const targets = this.nativeTargets(register, start, end);
    const computed = await this.compute(register, targets, native, 0, asOf);
    return { timestamps: targets, ends: targets.map((t) => bucketEnd(t, native, register.timeZone)), values: computed.values, updatedAt: computed.updatedAt };
  }

  private nativeTargets(register: RegisterForRead, start: number, end: number): Float64Array {
    const native = register.defaultResolution;
    const estimate = Math.ceil((end - start) / (native * 1000));
    if (estimate > MAX_NATIVE_BUCKETS) throw new HttpError('validation_failed', `Computing virtual register ${register.id} over this period takes more than ${MAX_NATIVE_BUCKETS} intervals; ask for a shorter period`);
    return bucketStarts(start, end, native, register.timeZone).filter((t) => t >= start);
  }

  async readingsJson(register: RegisterForRead, q: ReadWindow): Promise<Buffer> {
    const native = register.defaultResolution;
    const targets = this.nativeTargets(register, q.start, q.end);
    const computed = await this.compute(register, targets, native, 0, q.asOf);
    const out = new ReadingList(register.id);
    if (q.resolution === 0 || q.resolution === native) {
      for (let i = 0; i < targets.length; i += 1) {
        const v = computed.values[i]!;
        if (Number.isNaN(v)) continue;
        const u = computed.updatedAt[i]!;
        out.add(targets[i]!, bucketEnd(targets[i]!, native, register.timeZone), Number.isNaN(u) ? targets[i]! : u, v);
      }
      return seriesJson(out.series(), native);
    }
    // Bucket the computed values like stored readings: by the register's kind, or averaged.
    const sum = !q.forceAverage && aggregateOf(register) === 'sum';
    const buckets = bucketStarts(q.start, q.end, q.resolution, register.timeZone);
    let k = 0;
    for (const b of buckets) {
      const e = bucketEnd(b, q.resolution, register.timeZone);
      let total = 0;
      let count = 0;
      let latest = NaN;
      while (k < targets.length && targets[k]! < b) k += 1;
      for (; k < targets.length && targets[k]! < e; k += 1) {
        const v = computed.values[k]!;
        if (Number.isNaN(v)) continue;
        total += v;
        count += 1;
        if (!(computed.updatedAt[k]! <= latest)) latest = computed.updatedAt[k]!;
      }
      if (count > 0) out.add(b, e, Number.isNaN(latest) ? b : latest, sum ? total : total / count);
    }
    return seriesJson(out.series(), q.resolution);
  }
}

/** Computed readings collected for readingJson.ts: start, end, updatedAt, value. */
class ReadingList {
  private readonly t: number[] = [];
  private readonly v: number[] = [];
  private readonly r: number[] = [];
  private readonly u: number[] = [];

  constructor(private readonly registerId: number) {}

  add(start: number, end: number, updatedAt: number, value: number): void {
    this.t.push(start);
    this.r.push(Math.round((end - start) / 1000));
    this.u.push(updatedAt);
    this.v.push(value);
  }

  series(): Series {
    return { registerId: this.registerId, timestamps: Float64Array.from(this.t), values: Float64Array.from(this.v), resolutions: Int32Array.from(this.r), updatedAt: Float64Array.from(this.u) };
  }
}
