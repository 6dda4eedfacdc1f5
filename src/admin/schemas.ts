// Schemas of the identity objects the admin API manages.
import { featureSchema, permissionSchema } from '../auth/catalogue.ts';
import { arrayOf, dateTime, int32Id, nullable, objectSchema } from '../http/schemas.ts';
import type { JsonSchema } from '../http/types.ts';

const name = { type: 'string', minLength: 1, maxLength: 200 };

/** Organizations and roles are alike: a name and a set of catalogue names (features,
 * permissions). The body and the stored object of such a kind. */
function namedSet(title: string, setName: string, item: JsonSchema): { input: JsonSchema; object: JsonSchema } {
  return {
    input: objectSchema({ name, [setName]: arrayOf(item, { uniqueItems: true, default: [] }) }, ['name'], { title: `${title}Input` }),
    object: objectSchema(
      { id: int32Id, name: { type: 'string' }, [setName]: arrayOf(item), createdAt: dateTime, updatedAt: dateTime },
      ['id', 'name', setName, 'createdAt', 'updatedAt'],
      { title },
    ),
  };
}

export const { input: organizationInput, object: organizationSchema } = namedSet('Organization', 'features', featureSchema);
export const { input: roleInput, object: roleSchema } = namedSet('Role', 'permissions', permissionSchema);

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
