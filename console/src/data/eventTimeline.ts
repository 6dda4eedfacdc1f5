// Where each interval of an OpenADR event lies in time, by the same rule the VTN's x-start/x-end
// filter uses (src/vtn/timeSpan.ts, docs/vtn.md "Event span"): an interval's own intervalPeriod,
// else the k-th slot of the event's intervalPeriod; a zero or missing duration is open-ended.
import { addDuration, isZero, parseDuration, type Period } from '../../../src/vtn/timeSpan.ts';

export interface Payload {
  type: string;
  values: unknown[];
}

export interface VtnEvent {
  id: string;
  programID: string;
  eventName: string | null;
  priority: number | null;
  targets?: { type: string; values: unknown[] }[] | null;
  intervalPeriod?: Period | null;
  intervals?: { id: number; intervalPeriod?: Period | null; payloads?: Payload[] | null }[] | null;
  createdDateTime?: string;
}

export interface TimedInterval {
  id: number;
  start: number;
  /** null: open-ended. */
  end: number | null;
  payloads: Payload[];
}

export function intervalsOf(event: VtnEvent): TimedInterval[] {
  const period = event.intervalPeriod;
  const defaultStart = period ? Date.parse(period.start) : undefined;
  const defaultDuration = period?.duration ? parseDuration(period.duration) : undefined;
  const out: TimedInterval[] = [];
  (event.intervals ?? []).forEach((interval, k) => {
    let start: number;
    let duration = defaultDuration;
    if (interval.intervalPeriod) {
      start = Date.parse(interval.intervalPeriod.start);
      if (interval.intervalPeriod.duration) duration = parseDuration(interval.intervalPeriod.duration);
    } else if (defaultStart !== undefined) {
      start = defaultDuration && !isZero(defaultDuration) ? addDuration(defaultStart, defaultDuration, k) : defaultStart;
    } else return;
    const end = duration && !isZero(duration) ? addDuration(start, duration) : null;
    out.push({ id: interval.id, start: end !== null && end < start ? end : start, end: end !== null && end < start ? start : end, payloads: interval.payloads ?? [] });
  });
  return out;
}

/** "PRICE 0.25, 0.3 · SIMPLE 1" */
export function payloadText(payloads: readonly Payload[]): string {
  return payloads.map((p) => `${p.type} ${p.values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ')}`).join(' · ');
}
