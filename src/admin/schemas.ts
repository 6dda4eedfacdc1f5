// Schemas of the identity objects the admin API manages.
import { featureSchema, permissionSchema } from '../auth/catalogue.ts';
import { arrayOf, dateTime, int32Id, nullable, objectSchema } from '../http/schemas.ts';

const name = { type: 'string', minLength: 1, maxLength: 200 };

export const organizationInput = objectSchema(
  { name, features: arrayOf(featureSchema, { uniqueItems: true, default: [] }) },
  ['name'],
  { title: 'OrganizationInput' },
);

export const organizationSchema = objectSchema(
  { id: int32Id, name: { type: 'string' }, features: arrayOf(featureSchema), createdAt: dateTime, updatedAt: dateTime },
  ['id', 'name', 'features', 'createdAt', 'updatedAt'],
  { title: 'Organization' },
);

export const roleInput = objectSchema(
  { name, permissions: arrayOf(permissionSchema, { uniqueItems: true, default: [] }) },
  ['name'],
  { title: 'RoleInput' },
);

export const roleSchema = objectSchema(
  { id: int32Id, name: { type: 'string' }, permissions: arrayOf(permissionSchema), createdAt: dateTime, updatedAt: dateTime },
  ['id', 'name', 'permissions', 'createdAt', 'updatedAt'],
  { title: 'Role' },
);

export const userInput = objectSchema(
  {
    name,
    organizationId: nullable(int32Id, { description: 'Required unless globalAdmin is true.' }),
    roleIds: arrayOf(int32Id, { uniqueItems: true, default: [] }),
    globalAdmin: { type: 'boolean', default: false },
  },
  ['name'],
  { title: 'UserInput' },
);

const userProperties = {
  id: int32Id,
  name: { type: 'string' },
  organizationId: { type: ['integer', 'null'] },
  roleIds: arrayOf({ type: 'integer' }),
  globalAdmin: { type: 'boolean' },
  createdAt: dateTime,
  updatedAt: dateTime,
};
const userRequired = ['id', 'name', 'organizationId', 'roleIds', 'globalAdmin', 'createdAt', 'updatedAt'];

export const userSchema = objectSchema(userProperties, userRequired, { title: 'User' });

export const createdUserSchema = objectSchema(
  { ...userProperties, token: { type: 'string', description: 'Personal access token, shown only here. Send it as `Authorization: Bearer <token>`.' } },
  [...userRequired, 'token'],
  { title: 'CreatedUser' },
);

export const userTokenSchema = objectSchema(
  { token: { type: 'string', description: 'The new personal access token; earlier ones stop working.' } },
  ['token'],
  { title: 'UserToken' },
);
