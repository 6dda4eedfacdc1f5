// Schemas of organization clients and VTN credentials, exactly as the interface names them
// (request `rolesIds`, response `roleIds`).
import { arrayOf, int32Id, objectSchema } from '../http/schemas.ts';
import { scopeSchema } from './catalogue.ts';

/** The properties both kinds of client share (clientStore.ts `ApiClient`). */
const clientProperties = {
  id: int32Id,
  organizationId: int32Id,
  clientId: { type: 'string' },
  clientSecret: {
    type: ['string', 'null'],
    description: 'The client secret: returned by create and rotate only; null in lists. Store it safely, it cannot be shown again.',
  },
  clientName: { type: 'string' },
  hint: { type: 'string', description: 'First characters of the secret, to tell secrets apart.' },
};
const CLIENT_REQUIRED = Object.keys(clientProperties);

export const organizationClientInput = objectSchema(
  {
    clientName: { type: 'string', minLength: 1, maxLength: 128 },
    rolesIds: arrayOf(int32Id, { uniqueItems: true, default: [], description: 'Roles granted to the client (the response calls them `roleIds`).' }),
  },
  ['clientName'],
  { title: 'OrganizationClientInput' },
);

export const organizationClientSchema = objectSchema(
  { ...clientProperties, roleIds: arrayOf({ type: 'integer' }) },
  [...CLIENT_REQUIRED, 'roleIds'],
  { title: 'OrganizationClient' },
);

export const vtnCredentialInput = objectSchema(
  {
    organizationId: int32Id,
    name: { type: 'string', minLength: 1, maxLength: 128 },
    scopes: arrayOf(scopeSchema, { minItems: 1, uniqueItems: true }),
  },
  ['organizationId', 'name', 'scopes'],
  { title: 'VtnCredentialInput' },
);

export const vtnCredentialSchema = objectSchema(
  { ...clientProperties, scopes: arrayOf(scopeSchema) },
  [...CLIENT_REQUIRED, 'scopes'],
  { title: 'VtnCredential' },
);
