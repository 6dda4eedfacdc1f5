// The credential audit log: an entry for every create, rotate and delete of an organization
// client, a VTN credential or a personal access token (who, when, which; never a secret), written
// in the same transaction as the change, so an entry exists exactly when the change happened.
// Read by global administrators through GET /api/admin/credential-events.
import type { ApiRequest } from '../http/types.ts';
import type { Page } from '../http/schemas.ts';
import type { Queryable } from '../store/database.ts';

export type CredentialAction = 'create' | 'rotate' | 'delete';
export type CredentialKind = 'organization_client' | 'vtn_credential' | 'personal_access_token';

/** Who made a change: the caller's subject and organization, and the request's id. */
export interface Actor {
  subject: string;
  organizationId: number | null;
  requestId: string;
}

export function actorOf(req: Pick<ApiRequest, 'principal' | 'requestId'>): Actor {
  return { subject: req.principal?.subject ?? 'anonymous', organizationId: req.principal?.organizationId ?? null, requestId: req.requestId };
}

export interface CredentialEvent {
  id: number;
  at: Date;
  action: CredentialAction;
  credentialKind: CredentialKind;
  credentialId: number;
  credentialName: string;
  organizationId: number | null;
  actor: string;
  actorOrganizationId: number | null;
  requestId: string;
}

export async function recordCredentialEvent(
  db: Queryable,
  actor: Actor,
  event: { action: CredentialAction; credentialKind: CredentialKind; credentialId: number; credentialName: string; organizationId: number | null },
): Promise<void> {
  await db.query(
    `INSERT INTO credential_events (action, credential_kind, credential_id, credential_name, organization_id, actor, actor_organization_id, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [event.action, event.credentialKind, event.credentialId, event.credentialName, event.organizationId, actor.subject, actor.organizationId, actor.requestId],
  );
}

export interface CredentialEventQuery {
  limit: number;
  offset: number;
  organizationId?: number;
  credentialKind?: CredentialKind;
}

/** Newest first. */
export async function listCredentialEvents(db: Queryable, q: CredentialEventQuery): Promise<Page<CredentialEvent>> {
  const where = `($1::int IS NULL OR organization_id = $1) AND ($2::text IS NULL OR credential_kind = $2)`;
  const params = [q.organizationId ?? null, q.credentialKind ?? null];
  const [{ rows }, total] = await Promise.all([
    db.query<CredentialEvent>(
      `SELECT id::int, at, action, credential_kind AS "credentialKind", credential_id AS "credentialId", credential_name AS "credentialName",
         organization_id AS "organizationId", actor, actor_organization_id AS "actorOrganizationId", request_id AS "requestId"
       FROM credential_events WHERE ${where} ORDER BY id DESC LIMIT $3 OFFSET $4`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credential_events WHERE ${where}`, params),
  ]);
  return { items: rows, total: total.rows[0]!.n };
}
