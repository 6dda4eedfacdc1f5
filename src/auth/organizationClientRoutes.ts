// Organization clients: API applications of an organization, authenticated by client
// credentials, with permissions through roles. One rule for creating, rotating and deleting: the
// caller must hold every permission the client's roles grant (global administrators excepted).
// Otherwise a client could mint a more powerful client, or rotate one and take its new secret.
import { holdsPermission } from '../http/authorize.ts';
import { forbidden, notFound } from '../http/errors.ts';
import { arrayOf, idParams } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, Principal, RouteDef } from '../http/types.ts';
import type { Pool, Queryable } from '../store/database.ts';
import { createOrganizationClient, deleteClient, listClients, rotateClientSecret, type ClientAuthority } from './clientStore.ts';
import { actorOf } from './credentialEvents.ts';
import { assertRolesExist, permissionsOfRoles, requireOrganization } from './identityStore.ts';
import { organizationClientInput, organizationClientSchema } from './schemas.ts';

const ACCESS: AuthRequirement = { permission: 'Organization.Organization.ReadWrite', organization: { in: 'path', name: 'organizationId' } };
const TAGS = ['Organization clients'];

type OrgParams = { organizationId: number };
type ClientParams = OrgParams & { clientId: number };

/** Refuses (403) unless the caller holds every permission these roles grant. */
async function mayManage(db: Queryable, principal: Principal, roleIds: readonly number[], whose: string): Promise<void> {
  if (principal.globalAdmin) return;
  const beyond = (await permissionsOfRoles(db, roleIds)).filter((p) => !holdsPermission(principal.permissions, p));
  if (beyond.length > 0) throw forbidden(`${whose} grant permissions you do not hold: ${beyond.join(', ')}`);
}

/** The same rule over an existing client, checked under its row lock. */
const authorityOf =
  (principal: Principal): ClientAuthority =>
  (client, tx) =>
    mayManage(tx, principal, client.roleIds, "The client's roles");

export function organizationClientRoutes(pool: Pool): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/organization/:organizationId/client',
      summary: 'Create an organization client',
      description: 'Returns the client with its secret, shown only here. The roles may grant only permissions the caller holds.',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId'),
      body: organizationClientInput,
      bodyExample: { clientName: 'Metering integration', rolesIds: [2] },
      responses: { 200: { description: 'The new client and its secret', schema: organizationClientSchema } },
      async handler(req: ApiRequest<OrgParams, unknown, { clientName: string; rolesIds: number[] }>) {
        const { organizationId } = req.params;
        await requireOrganization(pool, req.principal, organizationId);
        const roleIds = req.body.rolesIds;
        await assertRolesExist(pool, roleIds, 'rolesIds');
        await mayManage(pool, req.principal!, roleIds, 'The roles');
        return { status: 200, body: await createOrganizationClient(pool, actorOf(req), organizationId, { clientName: req.body.clientName, roleIds }) };
      },
    },
    {
      method: 'GET',
      path: '/api/organization/:organizationId/client',
      summary: 'List organization clients',
      description: 'An extension to the interface, so administrators can find the ids to rotate or delete. Secrets are never listed (`clientSecret` is null).',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId'),
      responses: { 200: { description: 'The clients of the organization', schema: arrayOf(organizationClientSchema) } },
      async handler(req: ApiRequest<OrgParams>) {
        await requireOrganization(pool, req.principal, req.params.organizationId);
        return { status: 200, body: await listClients(pool, 'organization', req.params.organizationId) };
      },
    },
    {
      method: 'DELETE',
      path: '/api/organization/:organizationId/client/:clientId',
      summary: 'Delete an organization client',
      description: 'Its secret and every access token issued to it stop working (tokens within AUTH_CACHE_MS). The caller must hold every permission of the client’s roles (403 otherwise).',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId', 'clientId'),
      responses: { 204: { description: 'Deleted' } },
      async handler(req: ApiRequest<ClientParams>) {
        if (!(await deleteClient(pool, actorOf(req), 'organization', req.params.organizationId, req.params.clientId, authorityOf(req.principal!)))) throw notFound(`Client ${req.params.clientId}`);
        return { status: 204 };
      },
    },
    {
      method: 'PUT',
      path: '/api/organization/:organizationId/client/:clientId/secret',
      summary: 'Rotate the secret of an organization client',
      description: 'Returns the client with a new secret. The old secret and tokens issued with it stop working (tokens within AUTH_CACHE_MS). The caller must hold every permission of the client’s roles (403 otherwise).',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId', 'clientId'),
      responses: { 200: { description: 'The client with its new secret', schema: organizationClientSchema } },
      async handler(req: ApiRequest<ClientParams>) {
        const rotated = await rotateClientSecret(pool, actorOf(req), 'organization', req.params.organizationId, req.params.clientId, authorityOf(req.principal!));
        if (!rotated) throw notFound(`Client ${req.params.clientId}`);
        return { status: 200, body: rotated };
      },
    },
  ];
}
