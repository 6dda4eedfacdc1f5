// The demo month's trading through the public API, as the parties trade: the grid operator
// reserves capacity with an availability order, the providers offer, the order is cleared; the
// operator activates the reserved capacity and buys flexibility for evening peaks and a sunny
// noon; the providers accept with their resources.
import { ProductType } from '../../codes.ts';
import type { DemoApi } from './api.ts';
import { DAY, HOUR } from './clock.ts';
import type { DemoPlan } from './plan.ts';
import type { DemoOrganization } from './types.ts';
import { RESOURCES, type OrganizationKey, type ResourceKey } from './world.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export interface TradeContext {
  admin: string;
  tokens: Record<OrganizationKey, string>;
  organizations: Record<OrganizationKey, DemoOrganization>;
  resources: Record<ResourceKey, number>;
  zoneId: number;
  substationId: number;
}

/** Places the plan's orders, offers and acceptances; returns how many transactions were made. */
export async function trade(api: DemoApi, plan: DemoPlan, c: TradeContext): Promise<{ flexibility: number; availability: number }> {
  const ownerOf = (resource: ResourceKey) => RESOURCES.find((r) => r.key === resource)!.owner;
  const operator = c.organizations.operator.id;
  const a = plan.availability;
  const order = await api.post(
    '/api/product/order/availability',
    { organizationId: operator, marketZoneId: c.zoneId, productType: ProductType.AvailabilityUp, substationId: c.substationId, start: iso(a.start), end: iso(a.end), expiresAt: iso(a.expiresAt), flexibilityOrdersExpireAt: iso(a.end - DAY), quantity: a.quantity, availabilityPrice: a.price },
    c.tokens.operator,
  );
  for (const offer of a.offers) {
    const owner = ownerOf(offer.resource);
    await api.post(`/api/product/offer/availability/resource/${c.resources[offer.resource]}`, { organizationId: c.organizations[owner].id, offers: [{ availabilityOrderId: order.id, activationPrice: offer.activationPrice, maxQuantity: offer.maxQuantity, minQuantity: offer.minQuantity }] }, c.tokens[owner]);
  }
  // Cleared now rather than at expiresAt (the clearing job's moment), so the month can be traded on.
  await api.post(`/api/admin/orders/availability/${order.id}/clear`, {}, c.admin, 200);
  const reserved = await api.get<{ id: number; resourceId: number; availabilityOrderId: number }[]>(`/api/product/transaction/availability?organizationId=${operator}&start=${iso(a.start - DAY)}&end=${iso(a.end + DAY)}`, c.tokens.operator);
  const availabilityOf = (resource: ResourceKey) => reserved.find((t) => t.availabilityOrderId === order.id && t.resourceId === c.resources[resource])?.id;

  let flexibility = 0;
  for (const o of plan.flexibility) {
    const activates = o.activates ? availabilityOf(o.activates) : undefined;
    if (o.activates && activates === undefined) continue;
    const created = await api.post(
      '/api/product/order/flexibility',
      {
        organizationId: operator,
        marketZoneId: c.zoneId,
        productType: o.productType,
        start: iso(o.start),
        end: iso(o.end),
        expiresAt: iso(o.start - HOUR),
        unitPrice: o.unitPrice,
        minQuantity: activates ? o.quantity : 1,
        maxQuantity: o.quantity,
        ...(activates ? { availabilityTransactionId: activates } : {}),
      },
      c.tokens.operator,
    );
    if (!o.acceptedBy) continue;
    const owner = ownerOf(o.acceptedBy.resource);
    await api.post(`/api/product/order/flexibility/${created.id}/acceptance`, { organizationId: c.organizations[owner].id, resourceId: c.resources[o.acceptedBy.resource], quantity: o.acceptedBy.quantity }, c.tokens[owner]);
    flexibility += 1;
  }
  return { flexibility, availability: reserved.filter((t) => t.availabilityOrderId === order.id).length };
}
