// The one access check every route goes through (DESIGN.md, Identity). It runs in two steps:
// what the token alone decides (authenticated, administrator, scope, permission) before the
// body is read, and what needs the request (which organization) after validation.
import { HttpError } from './errors.ts';
import type { ApiRequest, AuthRequirement, Principal } from './types.ts';

/** ReadWrite implies Read: `Meter.Organization.Read` is held by `Meter.Organization.ReadWrite`. */
export function holdsPermission(permissions: ReadonlySet<string>, required: string): boolean {
  if (permissions.has(required)) return true;
  return required.endsWith('.Read') && permissions.has(`${required}Write`);
}

export function requirePrincipal(principal: Principal | undefined): Principal {
  if (!principal) throw new HttpError('unauthorized', 'A bearer access token is required', { headers: { 'WWW-Authenticate': 'Bearer' } });
  return principal;
}

/** Step 1: what the token decides on its own. */
export function checkCredentials(principal: Principal | undefined, need: AuthRequirement): Principal {
  const who = requirePrincipal(principal);
  if (need.globalAdmin && !who.globalAdmin) throw new HttpError('forbidden', 'Only global administrators may call this endpoint');
  if (who.globalAdmin) return who;
  if (need.anyScope && !need.anyScope.some((s) => who.scopes.has(s))) {
    throw new HttpError('forbidden', `Requires one of the scopes: ${need.anyScope.join(', ')}`);
  }
  if (need.permission && !holdsPermission(who.permissions, need.permission)) {
    throw new HttpError('forbidden', `Requires the permission ${need.permission}`);
  }
  if (!need.organization || need.organization.in === 'principal') checkOrganization(who, need, who.organizationId);
  return who;
}

/** Step 2: the organization named by the request, and the feature there. */
export function checkRequestOrganization(principal: Principal, need: AuthRequirement, req: Pick<ApiRequest, 'params' | 'query' | 'body'>): void {
  const source = need.organization;
  if (!source || source.in === 'principal' || principal.globalAdmin) return;
  const container = source.in === 'path' ? req.params : source.in === 'query' ? req.query : (req.body as Record<string, unknown> | undefined);
  const value = container?.[source.name];
  if (value === undefined || value === null) {
    throw new HttpError('validation_failed', `${source.name} is required`, {
      errors: [{ path: source.in === 'body' ? source.name : `${source.in}.${source.name}`, message: 'is required' }],
    });
  }
  checkOrganization(principal, need, Number(value));
}

function checkOrganization(who: Principal, need: AuthRequirement, organizationId: number | null): void {
  if (who.globalAdmin) return;
  if (organizationId === null || who.organizationId !== organizationId) {
    throw new HttpError('organization_forbidden', `No access to organization ${organizationId ?? '(none)'}`);
  }
  if (need.feature && !who.features.has(need.feature)) {
    throw new HttpError('feature_disabled', `The ${need.feature} feature is not enabled for organization ${organizationId}`);
  }
}
