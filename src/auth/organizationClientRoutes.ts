// Organization clients: API applications of an organization, authenticated by client
// credentials, with permissions through roles. A caller may only grant permissions it holds
// itself (global administrators excepted): a client cannot mint a more powerful client.
import { holdsPermission } from '../http/authorize.ts';
import { forbidden, notFound } from '../http/errors.ts';
import { arrayOf, idParams } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { createOrganizationClient, deleteClient, listClients, rotateClientSecret } from './clientStore.ts';
import { assertRolesExist, permissionsOfRoles, requireOrganization } from './identityStore.ts';
import { organizationClientInput, organizationClientSchema } from './schemas.ts';

const ACCESS: AuthRequirement = { permission: 'Organization.Organization.ReadWrite', organization: { in: 'path', name: 'organizationId' } };
const TAGS = ['Organization clients'];

type OrgParams = { organizationId: number };
type ClientParams = OrgParams & { clientId: number };

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
        const principal = req.principal!;
        if (!principal.globalAdmin) {
          const beyond = (await permissionsOfRoles(pool, roleIds)).filter((p) => !holdsPermission(principal.permissions, p));
          if (beyond.length > 0) throw forbidden(`The roles grant permissions you do not hold: ${beyond.join(', ')}`);
        }
        return { status: 200, body: await createOrganizationClient(pool, organizationId, { clientName: req.body.clientName, roleIds }) };
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
      description: 'Its secret and every access token issued to it stop working (tokens within AUTH_CACHE_MS).',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId', 'clientId'),
      responses: { 204: { description: 'Deleted' } },
      async handler(req: ApiRequest<ClientParams>) {
        if (!(await deleteClient(pool, 'organization', req.params.organizationId, req.params.clientId))) throw notFound(`Client ${req.params.clientId}`);
        return { status: 204 };
      },
    },
    {
      method: 'PUT',
      path: '/api/organization/:organizationId/client/:clientId/secret',
      summary: 'Rotate the secret of an organization client',
      description: 'Returns the client with a new secret. The old secret and tokens issued with it stop working (tokens within AUTH_CACHE_MS).',
      tags: TAGS,
      auth: ACCESS,
      params: idParams('organizationId', 'clientId'),
      responses: { 200: { description: 'The client with its new secret', schema: organizationClientSchema } },
      async handler(req: ApiRequest<ClientParams>) {
        const rotated = await rotateClientSecret(pool, 'organization', req.params.organizationId, req.params.clientId);
        if (!rotated) throw notFound(`Client ${req.params.clientId}`);
        return { status: 200, body: rotated };
      },
    },
  ];
}
