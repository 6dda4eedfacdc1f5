// Regression: error texts told another organization's meters and registers from ones that do
// not exist: POST /api/readings answered "organization 1 has no access to meter MTR-ORGB-0001" but
// "unknown meter", and "register … is not on meter …" for a register id used on another meter;
// GET /api/readings and the hourly averages answered 403 "no access to register(s) 7" but 400
// "Unknown register". Each pair now gets the same status and the same text (but for the id).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization, type OrgClient } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let writer: OrgClient;
let mine: { meter: Ref; register: Ref };
let theirs: { meter: Ref; register: Ref };

beforeAll(async () => {
  t = await startTestApp();
  writer = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  const meter = await createMeter(t.api, t.adminToken, [writer.organizationId]);
  mine = { meter, register: await createRegister(t.api, t.adminToken, meter.id) };
  const other = await createMeter(t.api, t.adminToken, [await createOrganization(t.api, t.adminToken)]);
  theirs = { meter: other, register: await createRegister(t.api, t.adminToken, other.id) };
});
afterAll(() => t?.close());

const values = [{ timestamp: '2024-01-01T00:00:00Z', value: 1, resolution: 900 }];
/** The refusal (status and problem document but its request id) with the id it names replaced
 * by a placeholder, to compare the texts: a string id as JSON text quotes it, a register's number
 * as "register <n>". */
function masked(res: { status: number; body: any }, id: string | number): { status: number; text: string } {
  const { requestId: _ignored, ...problem } = res.body;
  const named = typeof id === 'string' ? JSON.stringify(JSON.stringify(id)).slice(1, -1) : `register ${id}`;
  return { status: res.status, text: JSON.stringify(problem).split(named).join('<id>') };
}

describe('refusals for other organizations’ meters and registers', () => {
  it('POST /api/readings: another organization’s meter is refused as an unknown one', async () => {
    const post = (meterId: string) => t.api.post('/api/readings', { meters: [{ id: meterId, registers: [{ id: 'x', values }] }] }, writer.token);
    expect(masked(await post(theirs.meter.externalId), theirs.meter.externalId)).toEqual(masked(await post('MTR-NO-SUCH-0001'), 'MTR-NO-SUCH-0001'));
  });

  it('POST /api/readings: a register of another meter is refused as an unknown one', async () => {
    const post = (registerId: string) => t.api.post('/api/readings', { meters: [{ id: mine.meter.externalId, registers: [{ id: registerId, values }] }] }, writer.token);
    expect(masked(await post(theirs.register.externalId), theirs.register.externalId)).toEqual(masked(await post('REG-NO-SUCH-0001'), 'REG-NO-SUCH-0001'));
  });

  for (const [name, path] of [
    ['GET /api/readings', '/api/readings?'],
    ['GET /api/readings/average/hourly', '/api/readings/average/hourly?'],
  ] as const) {
    it(`${name}: another organization’s register is refused as an unknown one`, async () => {
      const get = (id: number) => t.api.get(readingsUrl(writer.organizationId, [mine.register.id, id], '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z').replace('/api/readings?', path), writer.token);
      const missing = 2_000_000_000;
      const foreign = await get(theirs.register.id);
      expect(foreign.status).toBe(400);
      expect(masked(foreign, theirs.register.id)).toEqual(masked(await get(missing), missing));
    });
  }
});
