// The products side of the admin API: orders on behalf of an organization, acceptances,
// clearing on demand.
import { notFound } from '../http/errors.ts';
import { arrayOf, idParams, int32Id, querySchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, JsonSchema, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { Pool } from '../store/database.ts';
import { clearNow } from './clearing.ts';
import { productRoutes } from './productRoutes.ts';
import * as orders from './orders.ts';
import { availabilityOrderSchema, flexibilityOrderSchema } from './schemas.ts';

const ADMIN: AuthRequirement = { globalAdmin: true };
const TAGS = ['Admin: products'];
const listQuery = querySchema({ marketZoneId: int32Id, start: utcDateTime, end: utcDateTime }, ['start', 'end']);
type ListQuery = { marketZoneId?: number; start: string; end: string };

/** The same route as a member organization's, for administrators acting on its behalf. */
function onBehalf(routes: RouteDef[], method: RouteDef['method'], path: string, adminPath: string, summary: string): RouteDef {
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`No product route ${method} ${path}`);
  return { ...route, path: adminPath, summary, auth: ADMIN, tags: TAGS };
}

type Period = { marketZoneId?: number; start: number; end: number };

/** GET /api/admin/orders/<kind>: the orders of every organization overlapping a period. */
function ordersOverlapping(kind: 'flexibility' | 'availability', schema: JsonSchema, list: (period: Period) => Promise<unknown[]>): RouteDef {
  return {
    method: 'GET',
    path: `/api/admin/orders/${kind}`,
    summary: `Every ${kind} order overlapping a period`,
    tags: TAGS,
    auth: ADMIN,
    query: listQuery,
    responses: { 200: { description: 'The orders', schema: arrayOf(schema) } },
    handler: async (req: ApiRequest<unknown, ListQuery>) => ({
      status: 200,
      body: await list({ marketZoneId: req.query.marketZoneId, start: parseUtcTimestamp(req.query.start)!, end: parseUtcTimestamp(req.query.end)! }),
    }),
  };
}

export function productAdminRoutes(pool: Pool): RouteDef[] {
  const product = productRoutes(pool);
  return [
    onBehalf(product, 'POST', '/api/product/order/flexibility', '/api/admin/orders/flexibility', 'Create a flexibility order on behalf of an organization'),
    onBehalf(product, 'POST', '/api/product/order/flexibility/:orderId/acceptance', '/api/admin/orders/flexibility/:orderId/acceptance', 'Accept a flexibility order on behalf of a provider'),
    onBehalf(product, 'POST', '/api/product/order/availability', '/api/admin/orders/availability', 'Create an availability order on behalf of an organization'),
    ordersOverlapping('flexibility', flexibilityOrderSchema, (period) => orders.listFlexibilityOrders(pool, { organizationId: null, ...period })),
    ordersOverlapping('availability', availabilityOrderSchema, (period) => orders.listAvailabilityOrders(pool, period)),
    {
      method: 'POST',
      path: '/api/admin/orders/availability/:orderId/clear',
      summary: 'Clear an open availability order now, before its expiresAt',
      description: 'Same merit order as the scheduled clearing (docs/products.md). 409 when the order is not open.',
      tags: TAGS,
      auth: ADMIN,
      params: idParams('orderId'),
      responses: { 200: { description: 'The order after clearing', schema: availabilityOrderSchema } },
      async handler(req: ApiRequest<{ orderId: number }>) {
        await clearNow(pool, req.params.orderId);
        const { rows } = await pool.query(`SELECT ${orders.AVAILABILITY_ORDER_COLUMNS} FROM availability_orders o WHERE o.id = $1`, [req.params.orderId]);
        if (!rows[0]) throw notFound(`Availability order ${req.params.orderId}`);
        return { status: 200, body: rows[0] };
      },
    },
  ];
}
