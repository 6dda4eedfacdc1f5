// Meters, registers and reading batches for the meter-data tests, made through the admin API.
import type { Permission } from '../../src/auth/catalogue.ts';
import { createOrgClient } from './fixtures.ts';
import type { Api } from './testApp.ts';

let counter = 0;
export const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

export async function createMeter(api: Api, admin: string, organizationsIds: number[], externalId = uniqueId('meter')): Promise<Ref> {
  const res = await api.post('/api/admin/meters', { externalId, name: externalId, type: 1, organizationsIds }, admin);
  if (res.status !== 201) throw new Error(`create meter: ${res.status} ${res.text}`);
  return res.body;
}

/** A meter or register as the admin API returns it, as far as the tests need it. */
export type Ref = { id: number; externalId: string };

export interface MeteredClient {
  /** Access token of an organization client holding the permissions asked for. */
  token: string;
  organizationId: number;
  /** A meter of that organization, with an energy (measurement type 1) and a power (3) register. */
  meter: Ref;
  energy: Ref;
  power: Ref;
}

/** An organization client with the given meter permissions, and a meter of its organization with
 * an energy and a power register in `timeZone`. */
export async function createMeteredClient(api: Api, admin: string, permissions: Permission[], timeZone = 'UTC'): Promise<MeteredClient> {
  const client = await createOrgClient(api, admin, { permissions });
  const meter = await createMeter(api, admin, [client.organizationId]);
  const energy = await createRegister(api, admin, meter.id, { measurementType: 1, timeZone });
  const power = await createRegister(api, admin, meter.id, { measurementType: 3, timeZone });
  return { token: client.token, organizationId: client.organizationId, meter, energy, power };
}

export interface RegisterOptions {
  measurementType?: number;
  defaultResolution?: number;
  timeZone?: string;
  isVirtual?: boolean;
  virtualDefinition?: Record<string, unknown>;
  externalId?: string;
}

export async function createRegister(api: Api, admin: string, meterId: number, options: RegisterOptions = {}): Promise<Ref> {
  const externalId = options.externalId ?? uniqueId('reg');
  const res = await api.post(
    '/api/admin/registers',
    {
      externalId,
      name: externalId,
      type: 1,
      measurementType: options.measurementType ?? 1,
      measurementPrefix: 3,
      defaultResolution: options.defaultResolution ?? 900,
      updateFrequency: 3600,
      meterId,
      isVirtual: options.isVirtual ?? false,
      timeZone: options.timeZone ?? 'UTC',
      virtualDefinition: options.virtualDefinition ?? null,
    },
    admin,
  );
  if (res.status !== 201) throw new Error(`create register: ${res.status} ${res.text}`);
  return res.body;
}

export interface Value {
  timestamp: string;
  value: number;
  resolution: number;
}

/** Values every `stepSeconds` from `start`, with value f(i). */
export function series(start: string, count: number, stepSeconds: number, f: (i: number) => number): Value[] {
  const t0 = Date.parse(start);
  return Array.from({ length: count }, (_, i) => ({ timestamp: new Date(t0 + i * stepSeconds * 1000).toISOString(), value: f(i), resolution: stepSeconds }));
}

export function batch(meter: string, registers: Record<string, Value[]>) {
  return { meters: [{ id: meter, registers: Object.entries(registers).map(([id, values]) => ({ id, values })) }] };
}

export function readingsUrl(organizationId: number, registerIds: number[], start: string, end: string, resolution?: number): string {
  const q = new URLSearchParams({ organizationId: String(organizationId), start, end });
  for (const id of registerIds) q.append('registerId', String(id));
  if (resolution !== undefined) q.set('resolution', String(resolution));
  return `/api/readings?${q}`;
}
