// Admin API for identity: organizations (with features), roles (with permissions), users (with
// personal access tokens). Global administrators only. The tables belong to src/auth; this
// module is their administrative surface.
import type { Pool } from '../store/database.ts';
import { actorOf } from '../auth/credentialEvents.ts';
import * as identity from '../auth/identityStore.ts';
import type { UserInput } from '../auth/identityStore.ts';
import { crudRoutes, storeOperations } from '../http/crudRoutes.ts';
import { idParams } from '../http/schemas.ts';
import type { AuthRequirement, RouteDef } from '../http/types.ts';
import {
  createdUserSchema,
  organizationInput,
  organizationSchema,
  roleInput,
  roleSchema,
  userInput,
  userSchema,
  userTokenSchema,
} from './schemas.ts';

const ADMIN: AuthRequirement = { globalAdmin: true };

type NamedInput = { name: string; features: string[]; permissions: string[] };

export function identityAdminRoutes(pool: Pool): RouteDef[] {
  return [
    ...crudRoutes<identity.Organization, NamedInput>({
      basePath: '/api/admin/organizations',
      noun: 'organization',
      tag: 'Admin: identity',
      auth: ADMIN,
      object: organizationSchema,
      input: organizationInput,
      example: { name: 'Grid Co', features: ['Grid', 'OpenADR'] },
      ...storeOperations(pool, { list: identity.listOrganizations, get: identity.getOrganization, create: identity.createOrganization, update: identity.updateOrganization, remove: identity.deleteOrganization }),
    }),
    ...crudRoutes<identity.Role, NamedInput>({
      basePath: '/api/admin/roles',
      noun: 'role',
      tag: 'Admin: identity',
      auth: ADMIN,
      object: roleSchema,
      input: roleInput,
      example: { name: 'Meter reader', permissions: ['Meter.Organization.Read'] },
      ...storeOperations(pool, { list: identity.listRoles, get: identity.getRole, create: identity.createRole, update: identity.updateRole, remove: identity.deleteRole }),
    }),
    ...crudRoutes<identity.User, UserInput>({
      basePath: '/api/admin/users',
      noun: 'user',
      tag: 'Admin: identity',
      auth: ADMIN,
      object: userSchema,
      input: userInput,
      example: { name: 'Ada Analyst', organizationId: 1, roleIds: [1], globalAdmin: false },
      created: createdUserSchema,
      // Creating a user issues its personal access token, deleting one revokes it: both logged.
      list: (page) => identity.listUsers(pool, page),
      get: (id) => identity.getUser(pool, id),
      create: (input, req) => identity.createUser(pool, input, actorOf(req)),
      update: (id, input) => identity.updateUser(pool, id, input),
      remove: (id, req) => identity.deleteUser(pool, id, actorOf(req)),
    }),
    {
      method: 'PUT',
      path: '/api/admin/users/:id/token',
      summary: "Replace a user's personal access token",
      description: 'Revokes every personal access token of the user and returns a new one, shown only here.',
      tags: ['Admin: identity'],
      auth: ADMIN,
      params: idParams('id'),
      responses: { 200: { description: 'The new token', schema: userTokenSchema } },
      handler: async (req) => ({ status: 200, body: { token: await identity.rotateUserToken(pool, req.params.id, actorOf(req)) } }),
    },
  ];
}
