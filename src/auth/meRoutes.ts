// GET /api/me: who the bearer token says the caller is. An extension to the interface for
// integrators debugging a 401/403: which organization, permissions, scopes and enabled features
// the platform sees. Answered from the authenticated principal, with no storage round trip.
import { arrayOf, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';

const meSchema = objectSchema(
  {
    kind: { type: 'string', enum: ['client', 'vtn', 'user'], description: 'Organization client, VTN credential, or user (personal access token).' },
    subject: { type: 'string', description: 'Client id, or `user:<id>`.' },
    organizationId: { type: ['integer', 'null'] },
    globalAdmin: { type: 'boolean' },
    permissions: arrayOf({ type: 'string' }),
    scopes: arrayOf({ type: 'string' }),
    features: arrayOf({ type: 'string' }),
  },
  ['kind', 'subject', 'organizationId', 'globalAdmin', 'permissions', 'scopes', 'features'],
  { title: 'Me' },
);

export function meRoutes(): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/me',
      summary: 'The identity behind the access token',
      description: 'Any valid token. Shows what authorization decisions are based on.',
      tags: ['Authentication'],
      auth: {},
      responses: { 200: { description: 'The caller', schema: meSchema } },
      handler(req: ApiRequest) {
        const p = req.principal!;
        return {
          status: 200,
          body: {
            kind: p.kind,
            subject: p.subject,
            organizationId: p.organizationId,
            globalAdmin: p.globalAdmin,
            permissions: [...p.permissions].sort(),
            scopes: [...p.scopes],
            features: [...p.features].sort(),
          },
        };
      },
    },
  ];
}
