// VTN credentials: client credentials for the demand-response interface, carrying OpenADR
// scopes. One rule for creating, listing, rotating and deleting them: Organization.Organization.
// ReadWrite in the organization, with OpenADR enabled there. The interface lets such a caller
// create a credential with any scopes, so rotating or deleting one grants it nothing more.
import { notFound } from '../http/errors.ts';
import { arrayOf, idParams, int32Id, querySchema } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { createVtnCredential, deleteClient, listClients, rotateClientSecret } from './clientStore.ts';
import { actorOf } from './credentialEvents.ts';
import { requireOrganization } from './identityStore.ts';
import { vtnCredentialInput, vtnCredentialSchema } from './schemas.ts';

const PERMISSION = 'Organization.Organization.ReadWrite';
const inQuery: AuthRequirement = { permission: PERMISSION, feature: 'OpenADR', organization: { in: 'query', name: 'organizationId' } };
const inBody: AuthRequirement = { permission: PERMISSION, feature: 'OpenADR', organization: { in: 'body', name: 'organizationId' } };
const organizationQuery = querySchema({ organizationId: int32Id }, ['organizationId']);
const TAGS = ['VTN credentials'];

type Query = { organizationId: number };
type Params = { credentialId: number };

export function vtnCredentialRoutes(pool: Pool): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/openadr/vtn/credential',
      summary: 'List VTN credentials',
      description: 'Secrets are never listed (`clientSecret` is null).',
      tags: TAGS,
      auth: inQuery,
      query: organizationQuery,
      responses: { 200: { description: 'The credentials of the organization', schema: arrayOf(vtnCredentialSchema) } },
      async handler(req: ApiRequest<unknown, Query>) {
        await requireOrganization(pool, req.principal, req.query.organizationId);
        return { status: 200, body: await listClients(pool, 'vtn', req.query.organizationId) };
      },
    },
    {
      method: 'POST',
      path: '/api/openadr/vtn/credential',
      summary: 'Create a VTN credential',
      description: 'Returns the credential with its secret, shown only here. Scopes: see the VtnScope schema and docs/security.md.',
      tags: TAGS,
      auth: inBody,
      body: vtnCredentialInput,
      bodyExample: { organizationId: 1, name: 'VEN gateway north', scopes: ['read_all', 'write_reports', 'write_subscriptions'] },
      responses: { 200: { description: 'The new credential and its secret', schema: vtnCredentialSchema } },
      async handler(req: ApiRequest<unknown, unknown, { organizationId: number; name: string; scopes: string[] }>) {
        await requireOrganization(pool, req.principal, req.body.organizationId);
        return { status: 200, body: await createVtnCredential(pool, actorOf(req), req.body.organizationId, req.body) };
      },
    },
    {
      method: 'PUT',
      path: '/api/openadr/vtn/credential/:credentialId/secret',
      summary: 'Rotate the secret of a VTN credential',
      description: 'The old secret and tokens issued with it stop working (tokens within AUTH_CACHE_MS).',
      tags: TAGS,
      auth: inQuery,
      params: idParams('credentialId'),
      query: organizationQuery,
      responses: { 200: { description: 'The credential with its new secret', schema: vtnCredentialSchema } },
      async handler(req: ApiRequest<Params, Query>) {
        const rotated = await rotateClientSecret(pool, actorOf(req), 'vtn', req.query.organizationId, req.params.credentialId);
        if (!rotated) throw notFound(`VTN credential ${req.params.credentialId}`);
        return { status: 200, body: rotated };
      },
    },
    {
      method: 'DELETE',
      path: '/api/openadr/vtn/credential/:credentialId',
      summary: 'Delete a VTN credential',
      tags: TAGS,
      auth: inQuery,
      params: idParams('credentialId'),
      query: organizationQuery,
      responses: { 204: { description: 'Deleted' } },
      async handler(req: ApiRequest<Params, Query>) {
        if (!(await deleteClient(pool, actorOf(req), 'vtn', req.query.organizationId, req.params.credentialId))) throw notFound(`VTN credential ${req.params.credentialId}`);
        return { status: 204 };
      },
    },
  ];
}
