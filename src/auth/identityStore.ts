// SQL for organizations, roles, users and personal access tokens. Rows come back already shaped
// as API objects (camelCase aliases), so the routes serialize them directly.
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import { rowReader, withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import { recordCredentialEvent, type Actor } from './credentialEvents.ts';
import { generatePersonalAccessToken, hashPersonalAccessToken, hintOf } from './secrets.ts';

export interface Page {
  limit: number;
  offset: number;
}

export interface Organization {
  id: number;
  name: string;
  features: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface Role {
  id: number;
  name: string;
  permissions: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface User {
  id: number;
  name: string;
  organizationId: number | null;
  roleIds: number[];
  globalAdmin: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface UserInput {
  name: string;
  organizationId?: number | null;
  roleIds?: number[];
  globalAdmin?: boolean;
}

const ORG_COLUMNS = 'id, name, features, created_at AS "createdAt", updated_at AS "updatedAt"';
const ROLE_COLUMNS = 'id, name, permissions, created_at AS "createdAt", updated_at AS "updatedAt"';
const USER_COLUMNS = `u.id, u.name, u.organization_id AS "organizationId", u.global_admin AS "globalAdmin",
  u.created_at AS "createdAt", u.updated_at AS "updatedAt",
  coalesce((SELECT array_agg(role_id ORDER BY role_id) FROM user_roles WHERE user_id = u.id), '{}') AS "roleIds"`;

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];

// Organizations ----------------------------------------------------------------------------

const organizationsReader = rowReader<Organization>(`SELECT ${ORG_COLUMNS} FROM organizations`);
export const listOrganizations = organizationsReader.list;
export const getOrganization = organizationsReader.get;

/** 404 unless the organization a request names exists. A non-administrator's token names its own
 * organization, which exists while the token is valid; only global administrators can name one
 * that does not exist, so only their requests look it up. */
export async function requireOrganization(db: Queryable, principal: Principal | undefined, id: number): Promise<void> {
  if (principal?.globalAdmin && !(await getOrganization(db, id))) throw notFound(`Organization ${id}`);
}

export async function createOrganization(db: Queryable, input: { name: string; features: string[] }): Promise<Organization> {
  const { rows } = await db.query<Organization>(`INSERT INTO organizations (name, features) VALUES ($1, $2) RETURNING ${ORG_COLUMNS}`, [input.name, unique(input.features)]);
  return rows[0]!;
}

export async function updateOrganization(db: Queryable, id: number, input: { name: string; features: string[] }): Promise<Organization | undefined> {
  const { rows } = await db.query<Organization>(`UPDATE organizations SET name = $2, features = $3, updated_at = now() WHERE id = $1 RETURNING ${ORG_COLUMNS}`, [id, input.name, unique(input.features)]);
  return rows[0];
}

export async function deleteOrganization(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM organizations WHERE id = $1', [id]);
  return rowCount === 1;
}

// Roles ------------------------------------------------------------------------------------

const rolesReader = rowReader<Role>(`SELECT ${ROLE_COLUMNS} FROM roles`);
export const listRoles = rolesReader.list;
export const getRole = rolesReader.get;

export async function createRole(db: Queryable, input: { name: string; permissions: string[] }): Promise<Role> {
  const { rows } = await db.query<Role>(`INSERT INTO roles (name, permissions) VALUES ($1, $2) RETURNING ${ROLE_COLUMNS}`, [input.name, unique(input.permissions)]);
  return rows[0]!;
}

/** Changing a role's permissions revokes the access tokens of clients holding it (they carry
 * their permissions), so the change takes effect as soon as the clients fetch new tokens. */
export async function updateRole(pool: Pool, id: number, input: { name: string; permissions: string[] }): Promise<Role | undefined> {
  const permissions = unique(input.permissions);
  return withTransaction(pool, async (tx) => {
    const { rows: before } = await tx.query<{ permissions: string[] }>('SELECT permissions FROM roles WHERE id = $1 FOR UPDATE', [id]);
    if (!before[0]) return undefined;
    const old = new Set(before[0].permissions);
    const changed = old.size !== permissions.length || permissions.some((p) => !old.has(p));
    const { rows } = await tx.query<Role>(`UPDATE roles SET name = $2, permissions = $3, updated_at = now() WHERE id = $1 RETURNING ${ROLE_COLUMNS}`, [id, input.name, permissions]);
    if (changed) {
      await tx.query('UPDATE api_clients SET token_version = token_version + 1 WHERE id IN (SELECT client_id FROM api_client_roles WHERE role_id = $1)', [id]);
    }
    return rows[0];
  });
}

export async function deleteRole(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM roles WHERE id = $1', [id]);
  return rowCount === 1;
}

/** 400 listing each role id that does not exist (`<path>[i]`). */
export async function assertRolesExist(db: Queryable, roleIds: readonly number[], path: string): Promise<void> {
  if (roleIds.length === 0) return;
  const { rows } = await db.query<{ id: number }>('SELECT id FROM roles WHERE id = ANY($1::int[])', [roleIds]);
  const known = new Set(rows.map((r) => r.id));
  const errors = roleIds.flatMap((id, i) => (known.has(id) ? [] : [{ path: `${path}[${i}]`, message: `role ${id} does not exist` }]));
  if (errors.length > 0) throw badRequest('Unknown role', errors);
}

export async function permissionsOfRoles(db: Queryable, roleIds: readonly number[]): Promise<string[]> {
  const { rows } = await db.query<{ permission: string }>('SELECT DISTINCT unnest(permissions) AS permission FROM roles WHERE id = ANY($1::int[])', [roleIds]);
  return rows.map((r) => r.permission);
}

// Users ------------------------------------------------------------------------------------

const usersReader = rowReader<User>(`SELECT ${USER_COLUMNS} FROM users u`, 'u');
export const listUsers = usersReader.list;
export const getUser = usersReader.get;

async function checkUserInput(db: Queryable, input: UserInput): Promise<void> {
  if (!input.globalAdmin && (input.organizationId === undefined || input.organizationId === null)) {
    throw badRequest('A user who is not a global administrator belongs to an organization', [{ path: 'organizationId', message: 'is required unless globalAdmin is true' }]);
  }
  if (input.organizationId != null && !(await getOrganization(db, input.organizationId))) {
    throw badRequest('Unknown organization', [{ path: 'organizationId', message: `organization ${input.organizationId} does not exist` }]);
  }
  await assertRolesExist(db, input.roleIds ?? [], 'roleIds');
}

async function setUserRoles(tx: PoolClient, userId: number, roleIds: readonly number[]): Promise<void> {
  await tx.query('DELETE FROM user_roles WHERE user_id = $1', [userId]);
  await tx.query('INSERT INTO user_roles (user_id, role_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [userId, unique(roleIds)]);
}

async function issuePersonalAccessToken(tx: Queryable, userId: number): Promise<string> {
  const token = generatePersonalAccessToken();
  await tx.query('INSERT INTO personal_access_tokens (user_id, token_hash, hint) VALUES ($1, $2, $3)', [userId, hashPersonalAccessToken(token), hintOf(token)]);
  return token;
}

/** A user's personal access token, as the credential log names it. */
function tokenEvent(action: 'create' | 'rotate' | 'delete', user: { id: number; name: string; organizationId: number | null }) {
  return { action, credentialKind: 'personal_access_token' as const, credentialId: user.id, credentialName: user.name, organizationId: user.organizationId };
}

export async function createUser(pool: Pool, input: UserInput, actor: Actor): Promise<User & { token: string }> {
  await checkUserInput(pool, input);
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO users (name, organization_id, global_admin) VALUES ($1, $2, $3) RETURNING id', [
      input.name,
      input.organizationId ?? null,
      input.globalAdmin ?? false,
    ]);
    const id = rows[0]!.id;
    await setUserRoles(tx, id, input.roleIds ?? []);
    const token = await issuePersonalAccessToken(tx, id);
    const user = (await getUser(tx, id))!;
    await recordCredentialEvent(tx, actor, tokenEvent('create', user));
    return { ...user, token };
  });
}

export async function updateUser(pool: Pool, id: number, input: UserInput): Promise<User | undefined> {
  await checkUserInput(pool, input);
  return withTransaction(pool, async (tx) => {
    const { rowCount } = await tx.query('UPDATE users SET name = $2, organization_id = $3, global_admin = $4, updated_at = now() WHERE id = $1 AND NOT bootstrap', [
      id,
      input.name,
      input.organizationId ?? null,
      input.globalAdmin ?? false,
    ]);
    if (rowCount === 0) {
      if (await getUser(tx, id)) throw new HttpError('conflict', 'The bootstrap administrator is managed through ADMIN_TOKEN and cannot be changed');
      return undefined;
    }
    await setUserRoles(tx, id, input.roleIds ?? []);
    return getUser(tx, id);
  });
}

export async function deleteUser(pool: Pool, id: number, actor: Actor): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ bootstrap: boolean; name: string; organizationId: number | null }>(
      'SELECT bootstrap, name, organization_id AS "organizationId" FROM users WHERE id = $1 FOR UPDATE',
      [id],
    );
    const user = rows[0];
    if (!user) return false;
    if (user.bootstrap) throw new HttpError('conflict', 'The bootstrap administrator cannot be deleted');
    await tx.query('DELETE FROM users WHERE id = $1', [id]);
    await recordCredentialEvent(tx, actor, tokenEvent('delete', { id, ...user }));
    return true;
  });
}

/** Revokes every personal access token of the user and issues a new one. */
export async function rotateUserToken(pool: Pool, id: number, actor: Actor): Promise<string> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ bootstrap: boolean; name: string; organizationId: number | null }>(
      'SELECT bootstrap, name, organization_id AS "organizationId" FROM users WHERE id = $1 FOR UPDATE',
      [id],
    );
    const user = rows[0];
    if (!user) throw notFound(`User ${id}`);
    if (user.bootstrap) throw new HttpError('conflict', 'The bootstrap administrator token is set through ADMIN_TOKEN or DATA_DIR/admin-token');
    await tx.query('DELETE FROM personal_access_tokens WHERE user_id = $1', [id]);
    const token = await issuePersonalAccessToken(tx, id);
    await recordCredentialEvent(tx, actor, tokenEvent('rotate', { id, ...user }));
    return token;
  });
}

// Lookups for authentication ---------------------------------------------------------------

export interface UserAccess {
  userId: number;
  organizationId: number | null;
  globalAdmin: boolean;
  permissions: string[];
  features: string[];
}

export async function accessByPersonalAccessToken(db: Queryable, tokenHash: Buffer): Promise<UserAccess | undefined> {
  const { rows } = await db.query<UserAccess>(
    `SELECT u.id AS "userId", u.organization_id AS "organizationId", u.global_admin AS "globalAdmin",
       coalesce((SELECT array_agg(DISTINCT p) FROM user_roles ur JOIN roles r ON r.id = ur.role_id, unnest(r.permissions) p WHERE ur.user_id = u.id), '{}') AS permissions,
       coalesce(o.features, '{}') AS features
     FROM personal_access_tokens t JOIN users u ON u.id = t.user_id LEFT JOIN organizations o ON o.id = u.organization_id
     WHERE t.token_hash = $1`,
    [tokenHash],
  );
  return rows[0];
}
