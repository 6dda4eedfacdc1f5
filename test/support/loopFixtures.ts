// The parties of the flexibility loop, made through the public API: a grid operator and a
// provider in a market zone, the provider's VTN with a business-logic credential and a VEN
// credential, a VEN with a resource, and the provider's grid resource bound to it.
import { createOrgClient, type OrgClient } from './fixtures.ts';
import { createMeter, createRegister, uniqueId } from './meterFixtures.ts';
import { MARKET_FEATURES, MARKET_PERMISSIONS } from './productFixtures.ts';
import type { Api, TestApp } from './testApp.ts';
import { BL_SCOPES, VEN_SCOPES, VTN, expectStatus, vtnClient, type VtnClient } from './vtn.ts';

export const PROVIDER_PERMISSIONS = [...MARKET_PERMISSIONS, 'Resource.Organization.ReadWrite'];

export interface LoopWorld {
  operator: OrgClient;
  provider: OrgClient;
  zoneId: number;
  zoneName: string;
  bl: VtnClient;
  venClient: VtnClient;
  venId: string;
  venName: string;
  resourceName: string;
  venResourceId: string;
  resource: BoundResource;
}

export interface BoundResource {
  id: number;
  meterExternalId: string;
  actualExternalId: string;
  actualRegisterId: number;
  referenceExternalId: string;
}

/** The world with one grid resource (energy register in kWh, stored reference), bound. */
export async function createLoopWorld(t: TestApp, options: { timeResolution?: number; quantityStep?: number; actualMeasurementType?: number } = {}): Promise<LoopWorld> {
  const operator = await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS });
  const provider = await createOrgClient(t.api, t.adminToken, { features: [...MARKET_FEATURES, 'OpenADR'], permissions: PROVIDER_PERMISSIONS });
  const zoneName = uniqueId('Zone North');
  const zone = await expectStatus(
    t.api.post(
      '/api/admin/zones',
      { name: zoneName, timeResolution: options.timeResolution ?? 1, orderQuantityResolution: options.quantityStep ?? 0.5, organizationIds: [operator.organizationId, provider.organizationId] },
      t.adminToken,
    ),
    201,
  );
  const bl = await vtnClient(t.api, t.adminToken, BL_SCOPES, provider.organizationId);
  const venClient = await vtnClient(t.api, t.adminToken, VEN_SCOPES, provider.organizationId);
  const venName = uniqueId('ven');
  const ven = await expectStatus(t.api.post(`${VTN}/vens`, { venName, clientID: venClient.clientId }, bl.token), 201);
  const resourceName = 'battery-1';
  const venResource = await expectStatus(t.api.post(`${VTN}/vens/${ven.id}/resources`, { resourceName }, bl.token), 201);
  const resource = await createBoundableResource(t, provider.organizationId, zone.id, options.actualMeasurementType);
  await bind(t.api, provider, resource.id, ven.id, venResource.id);
  return { operator, provider, zoneId: zone.id, zoneName, bl, venClient, venId: ven.id, venName, resourceName, venResourceId: venResource.id, resource };
}

/** A grid resource of the organization in the zone with an actual register (kWh unless told) and a stored reference. */
export async function createBoundableResource(t: TestApp, organizationId: number, zoneId: number, measurementType = 1): Promise<BoundResource> {
  const meter = await createMeter(t.api, t.adminToken, [organizationId]);
  const actual = await createRegister(t.api, t.adminToken, meter.id, { measurementType });
  const reference = await createRegister(t.api, t.adminToken, meter.id);
  const res = await expectStatus(
    t.api.post(
      '/api/admin/resources',
      { organizationId, name: uniqueId('battery'), type: 3, regulationType: 3, maxQuantity: 500, marketZoneId: zoneId, actualRegisterId: actual.id, referenceRegisterId: reference.id },
      t.adminToken,
    ),
    201,
  );
  return { id: res.id, meterExternalId: meter.externalId, actualExternalId: actual.externalId, actualRegisterId: actual.id, referenceExternalId: reference.externalId };
}

export async function bind(api: Api, provider: OrgClient, resourceId: number, venID: string, resourceID: string): Promise<any> {
  return expectStatus(api.put(`/api/grid/resource/${resourceId}/binding`, { organizationId: provider.organizationId, venID, resourceID }, provider.token), 200);
}

/** The next period start on the 15-minute grid at least `leadMs` ahead. */
export function nextSlot(leadMs = 120_000, slotMs = 900_000): number {
  return Math.ceil((Date.now() + leadMs) / slotMs) * slotMs;
}

/** A flexibility order of the operator over [start, start + minutes), expiring a minute before. */
export async function placeOrder(api: Api, w: Pick<LoopWorld, 'operator' | 'zoneId'>, start: number, options: { minutes?: number; productType?: number; maxQuantity?: number; unitPrice?: number } = {}): Promise<any> {
  const end = start + (options.minutes ?? 60) * 60_000;
  return expectStatus(
    api.post(
      '/api/product/order/flexibility',
      {
        organizationId: w.operator.organizationId,
        marketZoneId: w.zoneId,
        productType: options.productType ?? 1,
        start: new Date(start).toISOString(),
        end: new Date(end).toISOString(),
        expiresAt: new Date(start - 60_000).toISOString(),
        unitPrice: options.unitPrice ?? 0.25,
        minQuantity: 1,
        maxQuantity: options.maxQuantity ?? 100,
      },
      w.operator.token,
    ),
    201,
  );
}

export async function accept(api: Api, provider: OrgClient, orderId: number, resourceId: number, quantity: number): Promise<any> {
  return expectStatus(api.post(`/api/product/order/flexibility/${orderId}/acceptance`, { organizationId: provider.organizationId, resourceId, quantity }, provider.token), 201);
}

/** The organization's flexibility transactions overlapping [start, end). */
export async function transactions(api: Api, org: OrgClient, start: number, end: number): Promise<any[]> {
  const body = await expectStatus(api.get(`/api/product/transaction/flexibility?organizationId=${org.organizationId}&start=${new Date(start).toISOString()}&end=${new Date(end).toISOString()}`, org.token), 200);
  return body.flexibilityTransactions;
}
