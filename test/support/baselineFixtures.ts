// The Oslo history of the baseline regressions: an hourly energy register read from 1 February
// 2024, with the 12:00 reading missing on 2, 3 and 9 March, and an Average10Of10 baseline of it.
import { expect } from 'vitest';
import { createOrgClient } from './fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, type Value } from './meterFixtures.ts';
import type { TestApp } from './testApp.ts';

const OSLO = 'Europe/Oslo';
const HOUR = 3_600_000;
const MISSING_NOON = new Set(['2024-03-02', '2024-03-03', '2024-03-09']);

export interface OsloBaseline {
  /** Reads the baseline over [start, end) at its own resolution: timestamp → value. */
  read(start: string, end: string): Promise<Map<string, number>>;
  /** Replaces the event days of the baseline's source register. */
  setEventDays(days: string[]): Promise<void>;
}

/** Hourly readings from 2024-02-01 00:00 Oslo to 2024-04-10 00:00 Oslo; a smooth daily shape with
 * a level that changes from day to day, so that every day's total differs. */
function readings(): Value[] {
  const out: Value[] = [];
  const start = Date.parse('2024-01-31T23:00:00Z');
  const end = Date.parse('2024-04-09T22:00:00Z');
  for (let t = start; t < end; t += HOUR) {
    const local = new Date(t + (t >= Date.parse('2024-03-31T01:00:00Z') ? 2 : 1) * HOUR);
    const day = local.toISOString().slice(0, 10);
    const hour = local.getUTCHours();
    if (hour === 12 && MISSING_NOON.has(day)) continue;
    const level = 10 + ((local.getUTCDate() * 7 + local.getUTCMonth() * 3) % 11) / 4;
    out.push({ timestamp: new Date(t).toISOString(), value: level + Math.sin((hour / 24) * 2 * Math.PI), resolution: 3600 });
  }
  return out;
}

export async function osloBaseline(t: TestApp, baselineAlgorithmType = 6): Promise<OsloBaseline> {
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  const meter = await createMeter(t.api, t.adminToken, [client.organizationId]);
  const source = await createRegister(t.api, t.adminToken, meter.id, { timeZone: OSLO, defaultResolution: 3600 });
  const baseline = await createRegister(t.api, t.adminToken, meter.id, {
    timeZone: OSLO,
    defaultResolution: 3600,
    isVirtual: true,
    virtualDefinition: { calculationType: 3, baselineAlgorithmType, sourceRegisters: [source.id] },
  });
  const posted = await t.api.post('/api/readings', batch(meter.externalId, { [source.externalId]: readings() }), client.token);
  expect(posted.status, posted.text).toBe(204);
  return {
    async read(start, end) {
      const res = await t.api.get<{ readings: { timestamp: string; value: number }[] }[]>(readingsUrl(client.organizationId, [baseline.id], start, end), client.token);
      expect(res.status, res.text).toBe(200);
      return new Map(res.body[0]!.readings.map((r) => [r.timestamp, r.value]));
    },
    async setEventDays(days) {
      const res = await t.api.put(`/api/admin/registers/${source.id}/event-days`, { days }, t.adminToken);
      expect(res.status, res.text).toBe(200);
    },
  };
}

/** The values of `all` at the timestamps of [start, end). */
export function slice(all: Map<string, number>, start: string, end: string): Map<string, number> {
  return new Map([...all].filter(([t]) => t >= new Date(start).toISOString() && t < new Date(end).toISOString()));
}
