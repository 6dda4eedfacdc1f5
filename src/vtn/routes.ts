// The demand-response interface under /api/openadr/v1: the interface's 30 endpoints.
import type { RouteDef } from '../http/types.ts';
import type { VtnDeps } from './context.ts';
import { eventRoutes } from './eventRoutes.ts';
import { programRoutes } from './programRoutes.ts';
import { reportRoutes } from './reportRoutes.ts';
import { subscriptionRoutes } from './subscriptionRoutes.ts';
import { venRoutes } from './venRoutes.ts';

export type { VtnDeps } from './context.ts';

export function vtnRoutes(deps: VtnDeps): RouteDef[] {
  return [...venRoutes(deps), ...reportRoutes(deps), ...subscriptionRoutes(deps), ...programRoutes(deps), ...eventRoutes(deps)];
}
