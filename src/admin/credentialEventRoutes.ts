// GET /api/admin/credential-events: the credential audit log (src/auth/credentialEvents.ts) for
// global administrators: who created, rotated or deleted which organization client, VTN
// credential or personal access token, and when. Never a secret.
import { listCredentialEvents, type CredentialEventQuery } from '../auth/credentialEvents.ts';
import { arrayOf, dateTime, int32Id, objectSchema, pageQueryProperties, pageReply, querySchema, totalCountHeader } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';

const KINDS = ['organization_client', 'vtn_credential', 'personal_access_token'];

const credentialEventSchema = objectSchema(
  {
    id: { type: 'integer' },
    at: dateTime,
    action: { type: 'string', enum: ['create', 'rotate', 'delete'] },
    credentialKind: { type: 'string', enum: KINDS },
    credentialId: { type: 'integer', description: 'The client’s or VTN credential’s id, or the user’s id for a personal access token.' },
    credentialName: { type: 'string', description: 'The client id (public), or the user’s name.' },
    organizationId: { type: ['integer', 'null'], description: 'The credential’s organization (null: a global administrator without one).' },
    actor: { type: 'string', description: 'Who did it: the calling client’s id, or user:<id>.' },
    actorOrganizationId: { type: ['integer', 'null'] },
    requestId: { type: 'string', description: 'X-Request-Id of the request, to find it in the logs.' },
  },
  ['id', 'at', 'action', 'credentialKind', 'credentialId', 'credentialName', 'organizationId', 'actor', 'actorOrganizationId', 'requestId'],
  { title: 'CredentialEvent' },
);

export function credentialEventRoutes(pool: Pool): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/admin/credential-events',
      summary: 'Credential audit log',
      description: 'Every create, rotate and delete of an organization client, a VTN credential or a personal access token, newest first: who, when, which (never a secret). Filter by the credential’s organization or kind.',
      tags: ['Admin: identity'],
      auth: { globalAdmin: true },
      query: querySchema({ ...pageQueryProperties, organizationId: int32Id, credentialKind: { type: 'string', enum: KINDS } }),
      responses: { 200: { description: 'The events, newest first', schema: arrayOf(credentialEventSchema), headers: totalCountHeader } },
      handler: async (req: ApiRequest<unknown, CredentialEventQuery>) => pageReply(await listCredentialEvents(pool, req.query)),
    },
  ];
}
