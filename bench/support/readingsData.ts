// The same readings in every shape the meter-data benchmarks feed: the POST /api/readings JSON
// body, CSV and binary COPY files for PostgreSQL, and InfluxDB line protocol. Values are
// deterministic pseudo-random numbers with three decimals (meter data as utilities send it) and
// are written with the same JavaScript number text in every format.
import fs from 'node:fs';
import { encodeCopy, fillRegisterIds } from '../../src/shared/readings/pgCopy.ts';
import type { BenchMeter } from './meterSetup.ts';

export const STEP_SECONDS = 900;

/** First instant (UTC ms) of month `k` counted from January 2020: every run gets fresh months. */
export function monthStart(k: number): number {
  return Date.UTC(2020, k, 1);
}

/** Value of reading i of register r: 0.000 … 99.999, reproducible. */
export function valueOf(r: number, i: number): number {
  let x = (Math.imul(r + 1, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x % 100_000) / 1000;
}

/** Data sets of the meter-data benchmarks: `random` — valueOf, uniformly random 0.000–99.999
 * (today's figures, the worst case for a codec of meter data); `meter` — meterValueOf. */
export type DataKind = 'random' | 'meter';

const uniform = (r: number, i: number, salt: number) => {
  let x = (Math.imul(r + 1 + salt, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) / 2 ** 32;
};

/**
 * Meter-like data, reproducible: reading i of register r (15-minute energy in kWh of a
 * household, three decimals) taken at `startMs` + i × 15 min. A base load (0.05–0.11 kWh a
 * quarter hour, by register), a daily profile with a morning and a larger evening peak, 20%
 * more by day at weekends, and uniform noise of ±0.03 kWh; never below zero. The same numbers
 * go to every system compared.
 */
export function meterValueOf(r: number, i: number, startMs: number): number {
  const t = startMs + i * STEP_SECONDS * 1000;
  const hour = ((t / 3_600_000) % 24 + 24) % 24;
  const weekday = Math.floor(t / 86_400_000 + 4) % 7; // 0 = Sunday (1970-01-01 was a Thursday)
  const weekend = weekday === 0 || weekday === 6;
  const base = 0.05 + 0.06 * ((r % 11) / 10);
  const peak = (h: number, width: number) => Math.exp(-((((hour - h + 36) % 24) - 12) ** 2) / (2 * width * width));
  const day = 0.08 * peak(7.5, 1.2) + 0.16 * peak(19, 2) + (hour > 8 && hour < 17 ? (weekend ? 0.06 : 0.02) : 0);
  const noise = (uniform(r, i, 7) - 0.5) * 0.06;
  return Math.max(0, Math.round((base + day * (weekend ? 1.2 : 1) + noise) * 1000)) / 1000;
}

/** Value of reading i of register r in data set `kind` (readings every 15 minutes from `startMs`). */
export function dataValue(kind: DataKind, r: number, i: number, startMs: number): number {
  return kind === 'meter' ? meterValueOf(r, i, startMs) : valueOf(r, i);
}

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** {"meters":[{"id":…,"registers":[{"id":…,"values":[{"timestamp":…,"value":…,"resolution":900},…]}]}]} */
/** Reading i of register r (by position in the fleet): valueOf unless the caller says otherwise. */
export type ValueOf = (r: number, i: number) => number;

export function readingsBody(meters: readonly BenchMeter[], startMs: number, count: number, value: ValueOf = valueOf): Buffer {
  const stamps = Array.from({ length: count }, (_, i) => `{"timestamp":"${isoSeconds(startMs + i * STEP_SECONDS * 1000)}","value":`);
  const parts: string[] = [];
  let r = 0;
  for (const meter of meters) {
    const registers: string[] = [];
    for (const register of meter.registers) {
      const values = new Array<string>(count);
      for (let i = 0; i < count; i += 1) values[i] = `${stamps[i]}${value(r, i)},"resolution":${STEP_SECONDS}}`;
      registers.push(`{"id":${JSON.stringify(register.externalId)},"values":[${values.join(',')}]}`);
      r += 1;
    }
    parts.push(`{"id":${JSON.stringify(meter.externalId)},"registers":[${registers.join(',')}]}`);
  }
  return Buffer.from(`{"meters":[${parts.join(',')}]}`);
}

/** The same rows as a PostgreSQL CSV COPY file (register_id, ts, value, resolution, updated_at). */
export function writeCopyCsv(file: string, registerIds: readonly number[], startMs: number, count: number, updatedAtMs: number, value: ValueOf = valueOf): void {
  const stamps = Array.from({ length: count }, (_, i) => `${new Date(startMs + i * STEP_SECONDS * 1000).toISOString().replace('T', ' ').slice(0, 19)}+00`);
  const updated = `${new Date(updatedAtMs).toISOString().replace('T', ' ').replace('Z', '')}+00`;
  const fd = fs.openSync(file, 'w');
  try {
    registerIds.forEach((id, r) => {
      const lines = new Array<string>(count);
      for (let i = 0; i < count; i += 1) lines[i] = `${id},${stamps[i]},${value(r, i)},${STEP_SECONDS},${updated}\n`;
      fs.writeSync(fd, lines.join(''));
    });
  } finally {
    fs.closeSync(fd);
  }
}

/** The same rows in PostgreSQL's binary COPY format, encoded exactly as the ingest worker does. */
export function copyBinary(registerIds: readonly number[], startMs: number, count: number, updatedAtMs: number, value: ValueOf = valueOf): Buffer {
  const n = registerIds.length * count;
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  const resolutions = new Int32Array(n).fill(STEP_SECONDS);
  const offsets = new Int32Array(registerIds.length + 1);
  for (let r = 0; r < registerIds.length; r += 1) {
    offsets[r] = r * count;
    for (let i = 0; i < count; i += 1) {
      timestamps[r * count + i] = startMs + i * STEP_SECONDS * 1000;
      values[r * count + i] = value(r, i);
    }
  }
  offsets[registerIds.length] = n;
  const payload = encodeCopy(timestamps, values, resolutions, updatedAtMs);
  fillRegisterIds(payload, offsets, registerIds);
  return payload;
}

/** InfluxDB line protocol, `batchLines` lines per request body:
 *   reading,register=<externalId> value=<v>,resolution=900i <unix seconds> */
export function lineProtocolBatches(registers: readonly { externalId: string }[], startMs: number, count: number, batchLines: number, value: ValueOf = valueOf, measurement = 'reading'): string[] {
  const seconds = Array.from({ length: count }, (_, i) => String(startMs / 1000 + i * STEP_SECONDS));
  const batches: string[] = [];
  let lines: string[] = [];
  registers.forEach((register, r) => {
    const prefix = `${measurement},register=${register.externalId} value=`;
    for (let i = 0; i < count; i += 1) {
      lines.push(`${prefix}${value(r, i)},resolution=${STEP_SECONDS}i ${seconds[i]}`);
      if (lines.length === batchLines) {
        batches.push(lines.join('\n'));
        lines = [];
      }
    }
  });
  if (lines.length > 0) batches.push(lines.join('\n'));
  return batches;
}
