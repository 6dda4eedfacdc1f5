// Rules shared by orders, offers and acceptances: the market zone's time grid and quantity step
// (checked in exact decimal arithmetic, never binary floating point), product families, and who
// may see an order.
import { ProductType, TIME_RESOLUTION_SECONDS, type TimeResolution } from '../codes.ts';
import type { FieldError } from '../http/errors.ts';
import { isMultipleOf } from './decimal.ts';

export function isOnTimeGrid(ms: number, resolution: TimeResolution): boolean {
  return ms % (TIME_RESOLUTION_SECONDS[resolution] * 1000) === 0;
}

export function timeGridErrors(fields: Record<string, number>, resolution: TimeResolution): FieldError[] {
  const seconds = TIME_RESOLUTION_SECONDS[resolution];
  return Object.entries(fields).flatMap(([path, ms]) =>
    isOnTimeGrid(ms, resolution) ? [] : [{ path, message: `must be on the market zone's time grid (multiples of ${seconds} s from the UTC epoch)` }],
  );
}

export function quantityErrors(fields: Record<string, number>, step: number): FieldError[] {
  return Object.entries(fields).flatMap(([path, q]) => (isMultipleOf(q, step) ? [] : [{ path, message: `must be a multiple of the market zone's quantity step ${step}` }]));
}

export const FLEXIBILITY_PRODUCTS: readonly ProductType[] = [ProductType.FlexibilityUp, ProductType.FlexibilityDown];
export const AVAILABILITY_PRODUCTS: readonly ProductType[] = [ProductType.AvailabilityUp, ProductType.AvailabilityDown];

/** The flexibility product that activates an availability product (same direction). */
export function activationOf(availability: ProductType): ProductType {
  return availability === ProductType.AvailabilityUp ? ProductType.FlexibilityUp : ProductType.FlexibilityDown;
}

/** Upward products count reductions of net consumption as delivery; downward ones increases. */
export function isUpward(product: ProductType): boolean {
  return product === ProductType.FlexibilityUp || product === ProductType.AvailabilityUp;
}

/** SQL condition (for alias `o`) that an organization ($n) may see an order: a member of its
 * zone, and either the order is open to all (no targets), targets it, or is its own. */
export function visibleOrderSql(alias: string, param: string): string {
  return `(${alias}.organization_id = ${param} OR (EXISTS (SELECT 1 FROM market_zone_organizations mzo WHERE mzo.market_zone_id = ${alias}.market_zone_id AND mzo.organization_id = ${param})
    AND (cardinality(${alias}.target_organization_ids) = 0 OR ${param} = ANY(${alias}.target_organization_ids))))`;
}
