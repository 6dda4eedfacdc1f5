// Meters and registers for the meter-data benchmarks, made through the admin API as a customer
// would (test/support/meterFixtures.ts does the same for tests), and a client of an organization
// that has access to them.
import { call, clientToken } from './bootApp.ts';
import { mapConcurrent } from './measure.ts';

export interface BenchRegister {
  /** Database id (GET /api/readings registerId). */
  id: number;
  externalId: string;
}

export interface BenchMeter {
  externalId: string;
  registers: BenchRegister[];
}

export interface BenchFleet {
  organizationId: number;
  token: string;
  meters: BenchMeter[];
  /** Every register, meter by meter. */
  registers: BenchRegister[];
}

export interface FleetOptions {
  meters: number;
  registersPerMeter: number;
  permissions: string[];
  /** Register measurementType (1 = active energy, summed into larger buckets). */
  measurementType?: number;
  timeZone?: string;
}

export async function createFleet(baseUrl: string, adminToken: string, o: FleetOptions): Promise<BenchFleet> {
  const { organizationId, token } = await clientToken(baseUrl, adminToken, [], o.permissions);
  const tag = Math.random().toString(36).slice(2, 8);
  const meters = await mapConcurrent(
    Array.from({ length: o.meters }, (_, m) => m),
    8,
    async (m): Promise<BenchMeter & { id: number }> => {
      const externalId = `bench-${tag}-m${m}`;
      const meter = await call(baseUrl, 'POST', '/api/admin/meters', adminToken, { externalId, name: externalId, type: 1, organizationsIds: [organizationId] });
      return { id: meter.id, externalId, registers: [] };
    },
  );
  const pairs = meters.flatMap((meter) => Array.from({ length: o.registersPerMeter }, (_, r) => ({ meter, r })));
  await mapConcurrent(pairs, 8, async ({ meter, r }) => {
    const externalId = `${meter.externalId}-r${r}`;
    const register = await call(baseUrl, 'POST', '/api/admin/registers', adminToken, {
      externalId,
      name: externalId,
      type: 1,
      measurementType: o.measurementType ?? 1,
      measurementPrefix: 3,
      defaultResolution: 900,
      updateFrequency: 3600,
      meterId: meter.id,
      isVirtual: false,
      timeZone: o.timeZone ?? 'UTC',
      virtualDefinition: null,
    });
    meter.registers[r] = { id: register.id, externalId };
  });
  return { organizationId, token, meters, registers: meters.flatMap((m) => m.registers) };
}
