// SQL for API clients: organization clients (permissions through roles) and VTN credentials
// (OpenADR scopes). Secrets leave this module only from create and rotate. Every create, rotate
// and delete writes its credential_events entry in the same transaction (credentialEvents.ts).
import { withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import { recordCredentialEvent, type Actor, type CredentialKind } from './credentialEvents.ts';
import { generateClientId, generateSecret, hashSecret, hintOf } from './secrets.ts';

export type ClientKind = 'organization' | 'vtn';

/** What every API client has, whatever its kind. */
interface ApiClient {
  id: number;
  organizationId: number;
  clientId: string;
  clientSecret: string | null;
  clientName: string;
  hint: string;
}

export interface OrganizationClient extends ApiClient {
  roleIds: number[];
}

export interface VtnCredential extends ApiClient {
  scopes: string[];
}

const COLUMNS = `c.id, c.organization_id AS "organizationId", c.client_id AS "clientId", NULL AS "clientSecret",
  c.client_name AS "clientName", c.hint, c.scopes,
  coalesce((SELECT array_agg(role_id ORDER BY role_id) FROM api_client_roles WHERE client_id = c.id), '{}') AS "roleIds"`;

type Row = OrganizationClient & VtnCredential;

const EVENT_KIND: Record<ClientKind, CredentialKind> = { organization: 'organization_client', vtn: 'vtn_credential' };

/** Checks, before a rotate or delete, that the caller may act on this client (its roles); throws to refuse. */
export type ClientAuthority = (client: { id: number; roleIds: number[]; scopes: string[] }, tx: PoolClient) => Promise<void>;
function shape<K extends ClientKind>(kind: K, row: Row): K extends 'vtn' ? VtnCredential : OrganizationClient {
  const { scopes, roleIds, ...common } = row;
  return (kind === 'vtn' ? { ...common, scopes } : { ...common, roleIds }) as never;
}

async function insertClient(pool: Pool, actor: Actor, kind: ClientKind, organizationId: number, clientName: string, scopes: string[], roleIds: number[]): Promise<Row> {
  const secret = generateSecret();
  const secretHash = await hashSecret(secret);
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>(
      'INSERT INTO api_clients (kind, organization_id, client_id, client_name, secret_hash, hint, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id',
      [kind, organizationId, generateClientId(kind), clientName, secretHash, hintOf(secret), [...new Set(scopes)]],
    );
    const id = rows[0]!.id;
    if (roleIds.length > 0) await tx.query('INSERT INTO api_client_roles (client_id, role_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [id, roleIds]);
    const created = await tx.query<Row>(`SELECT ${COLUMNS} FROM api_clients c WHERE c.id = $1`, [id]);
    const row = created.rows[0]!;
    await recordCredentialEvent(tx, actor, { action: 'create', credentialKind: EVENT_KIND[kind], credentialId: id, credentialName: row.clientId, organizationId });
    return { ...row, clientSecret: secret };
  });
}

export async function createOrganizationClient(pool: Pool, actor: Actor, organizationId: number, input: { clientName: string; roleIds: number[] }): Promise<OrganizationClient> {
  return shape('organization', await insertClient(pool, actor, 'organization', organizationId, input.clientName, [], input.roleIds));
}

export async function createVtnCredential(pool: Pool, actor: Actor, organizationId: number, input: { name: string; scopes: string[] }): Promise<VtnCredential> {
  return shape('vtn', await insertClient(pool, actor, 'vtn', organizationId, input.name, input.scopes, []));
}

/** The client, locked until the transaction ends, after the caller's authority over it was checked. */
async function lockedClient(tx: PoolClient, kind: ClientKind, organizationId: number, id: number, authority: ClientAuthority | undefined): Promise<Row | undefined> {
  const { rows } = await tx.query<Row>(`SELECT ${COLUMNS} FROM api_clients c WHERE c.id = $1 AND c.kind = $2 AND c.organization_id = $3 FOR UPDATE`, [id, kind, organizationId]);
  const row = rows[0];
  if (row && authority) await authority(row, tx);
  return row;
}

export async function listClients<K extends ClientKind>(db: Queryable, kind: K, organizationId: number): Promise<(K extends 'vtn' ? VtnCredential : OrganizationClient)[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM api_clients c WHERE c.kind = $1 AND c.organization_id = $2 ORDER BY c.id`, [kind, organizationId]);
  return rows.map((row) => shape(kind, row));
}

/** Deleting the row revokes every token issued to the client (the version check finds nothing). */
export async function deleteClient(pool: Pool, actor: Actor, kind: ClientKind, organizationId: number, id: number, authority?: ClientAuthority): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const row = await lockedClient(tx, kind, organizationId, id, authority);
    if (!row) return false;
    await tx.query('DELETE FROM api_clients WHERE id = $1', [id]);
    await recordCredentialEvent(tx, actor, { action: 'delete', credentialKind: EVENT_KIND[kind], credentialId: id, credentialName: row.clientId, organizationId });
    return true;
  });
}

/** A new secret; the old one stops working at once and the token version moves, so tokens
 * issued before the rotation are refused too. */
export async function rotateClientSecret<K extends ClientKind>(
  pool: Pool,
  actor: Actor,
  kind: K,
  organizationId: number,
  id: number,
  authority?: ClientAuthority,
): Promise<(K extends 'vtn' ? VtnCredential : OrganizationClient) | undefined> {
  const secret = generateSecret();
  const secretHash = await hashSecret(secret);
  return withTransaction(pool, async (tx) => {
    const row = await lockedClient(tx, kind, organizationId, id, authority);
    if (!row) return undefined;
    const { rows } = await tx.query<Row>(
      `UPDATE api_clients c SET secret_hash = $2, hint = $3, token_version = token_version + 1, updated_at = now() WHERE c.id = $1 RETURNING ${COLUMNS}`,
      [id, secretHash, hintOf(secret)],
    );
    await recordCredentialEvent(tx, actor, { action: 'rotate', credentialKind: EVENT_KIND[kind], credentialId: id, credentialName: row.clientId, organizationId });
    return shape(kind, { ...rows[0]!, clientSecret: secret });
  });
}

export interface ClientForToken {
  id: number;
  kind: ClientKind;
  organizationId: number;
  secretHash: string;
  scopes: string[];
  tokenVersion: number;
  permissions: string[];
}

export async function findClientForToken(db: Queryable, clientId: string): Promise<ClientForToken | undefined> {
  const { rows } = await db.query<ClientForToken>(
    `SELECT c.id, c.kind, c.organization_id AS "organizationId", c.secret_hash AS "secretHash", c.scopes, c.token_version AS "tokenVersion",
       coalesce((SELECT array_agg(DISTINCT p) FROM api_client_roles cr JOIN roles r ON r.id = cr.role_id, unnest(r.permissions) p WHERE cr.client_id = c.id), '{}') AS permissions
     FROM api_clients c WHERE c.client_id = $1`,
    [clientId],
  );
  return rows[0];
}

export async function clientExists(db: Queryable, clientId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM api_clients WHERE client_id = $1', [clientId]);
  return rowCount === 1;
}

/** What a cached token must be re-checked against: the client's current version and its
 * organization's features. Undefined when the client was deleted. */
export async function clientAccess(db: Queryable, id: number): Promise<{ tokenVersion: number; features: string[] } | undefined> {
  const { rows } = await db.query<{ tokenVersion: number; features: string[] }>(
    'SELECT c.token_version AS "tokenVersion", o.features FROM api_clients c JOIN organizations o ON o.id = c.organization_id WHERE c.id = $1',
    [id],
  );
  return rows[0];
}

/** clientAccess of several clients in one query (absent: deleted). */
export async function clientAccessMany(db: Queryable, ids: readonly number[]): Promise<Map<number, { tokenVersion: number; features: string[] }>> {
  const { rows } = await db.query<{ id: number; tokenVersion: number; features: string[] }>(
    'SELECT c.id, c.token_version AS "tokenVersion", o.features FROM api_clients c JOIN organizations o ON o.id = c.organization_id WHERE c.id = ANY($1::int[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { tokenVersion: r.tokenVersion, features: r.features }]));
}
