// The world the console tests look at, made through the real API: an organization with every
// feature, an administrator user of it (personal access token), an organization client (client
// credentials) with read permissions, a meter with two measured registers and a virtual one,
// two days of 15-minute readings with one reading missing, and a receiver for webhooks.
import { createOrgClient, createOrganization, createRole, type OrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, series, type Value } from '../support/meterFixtures.ts';
import type { Api } from '../support/testApp.ts';

export const DAY1 = '2024-03-04';
export const DAY2 = '2024-03-05';
/** The 15-minute reading of register A left out (day 2, 10:00): a gap and a partial day. */
export const MISSING_AT = '2024-03-05T10:00:00.000Z';

export interface ConsoleWorld {
  organizationId: number;
  /** A global administrator who belongs to the organization (sees its VTN and the admin API). */
  adminPat: string;
  reader: OrgClient;
  /** A client without Meter permissions (403 on readings). */
  outsider: OrgClient;
  meter: { id: number; externalId: string };
  registerA: { id: number; externalId: string };
  registerB: { id: number; externalId: string };
  virtualSum: { id: number; externalId: string };
}

export async function buildWorld(api: Api, admin: string): Promise<ConsoleWorld> {
  const organizationId = await createOrganization(api, admin, ['Grid', 'OpenADR', 'Settlements', 'DecisionSupport', 'ResourceManagement']);
  const user = await api.post('/api/admin/users', { name: 'Console admin', organizationId, globalAdmin: true }, admin);
  if (user.status !== 201) throw new Error(`create user: ${user.status} ${user.text}`);
  const reader = await createOrgClient(api, admin, { organizationId, permissions: ['Meter.Organization.Read', 'Order.Organization.Read'] });
  const outsider = await createOrgClient(api, admin, { organizationId, permissions: ['Resource.Organization.Read'] });
  await createRole(api, admin, ['Meter.Organization.Read']);

  const meter = await createMeter(api, admin, [organizationId], 'console-meter');
  const registerA = await createRegister(api, admin, meter.id, { externalId: 'import-a' });
  const registerB = await createRegister(api, admin, meter.id, { externalId: 'import-b' });
  const virtualSum = await createRegister(api, admin, meter.id, {
    externalId: 'sum-a-b',
    isVirtual: true,
    virtualDefinition: { calculationType: 1, expression: 'r0 + r1', sourceRegisters: [registerA.id, registerB.id] },
  });
  const a: Value[] = series(`${DAY1}T00:00:00Z`, 192, 900, (i) => Math.round((1 + Math.sin(i / 8)) * 1000) / 1000).filter((v) => v.timestamp !== MISSING_AT);
  const b: Value[] = series(`${DAY1}T00:00:00Z`, 192, 900, (i) => 0.25 + (i % 12) * 0.125);
  const posted = await api.post('/api/readings', batch(meter.externalId, { [registerA.externalId]: a, [registerB.externalId]: b }), admin);
  if (posted.status !== 204) throw new Error(`post readings: ${posted.status} ${posted.text}`);
  return { organizationId, adminPat: user.body.token, reader, outsider, meter, registerA, registerB, virtualSum };
}

export interface MarketWorld {
  operator: OrgClient;
  provider: OrgClient;
  substationId: number;
  orderId: number;
  transactionId: number;
}

const HOUR = 3_600_000;
/** On the quarter-hour grid, `hours` after the next full hour. */
const at = (hours: number) => new Date(Math.ceil(Date.now() / HOUR) * HOUR + hours * HOUR).toISOString();

/** A zone with a grid operator and a provider, a provider resource behind a substation, a
 * flexibility order of the operator and the provider's acceptance (a transaction awaiting
 * delivery validation). */
export async function buildMarket(api: Api, admin: string): Promise<MarketWorld> {
  const permissions = ['Order.Organization.ReadWrite', 'Organization.Organization.Read'];
  const features = ['Grid', 'ResourceManagement', 'DecisionSupport', 'Settlements'];
  const operator = await createOrgClient(api, admin, { features, permissions });
  const provider = await createOrgClient(api, admin, { features, permissions });
  const expect201 = async (path: string, body: unknown, token: string) => {
    const res = await api.post(path, body, token);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const zone = await expect201('/api/admin/zones', { name: 'Console zone', timeResolution: 1, orderQuantityResolution: 0.5, organizationIds: [operator.organizationId, provider.organizationId] }, admin);
  const resource = await expect201('/api/admin/resources', { organizationId: provider.organizationId, name: 'Battery park', type: 3, regulationType: 3, maxQuantity: 100, marketZoneId: zone.id }, admin);
  const substation = await expect201('/api/admin/substations', { organizationId: operator.organizationId, marketZoneId: zone.id, name: 'Nord', impacts: [{ resourceId: resource.id, factor: 0.8 }] }, admin);
  const order = await expect201(
    '/api/product/order/flexibility',
    { organizationId: operator.organizationId, marketZoneId: zone.id, productType: 1, start: at(4), end: at(5), expiresAt: at(3), unitPrice: 1.25, minQuantity: 1, maxQuantity: 10 },
    operator.token,
  );
  const transaction = await expect201(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: provider.organizationId, resourceId: resource.id, quantity: 4 }, provider.token);
  return { operator, provider, substationId: substation.id, orderId: order.id, transactionId: transaction.id };
}
