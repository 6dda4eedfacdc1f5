// /api/admin/notifications — what the webhook dispatcher is doing, for operators (global
// administrators): notifications by state (pending, delivered, dead) with their last error, and
// the retry of a dead one. Bearer tokens are never shown. And the MQTT outbox
// (/api/admin/mqtt-messages): each change's message with its topics, pending until the broker
// acknowledged it.
import { conflict, notFound } from '../http/errors.ts';
import { arrayOf, dateTime, int32Id, objectSchema, pageQueryProperties, pageReply, querySchema, totalCountHeader, type Page } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import { webhookBody, type BodySource } from './dispatcher.ts';
import { notificationSchema, OBJECT_KINDS, objectId } from './schemas.ts';

const ADMIN: AuthRequirement = { globalAdmin: true };
const TAGS = ['Admin: VTN notifications'];
const STATES = ['pending', 'delivered', 'dead'] as const;

const notificationStatusSchema = objectSchema(
  {
    id: { type: 'string', format: 'uuid', description: 'The notification id (body notificationID, header X-Notification-Id).' },
    organizationId: int32Id,
    subscriptionID: { type: 'string' },
    callbackUrl: { type: 'string' },
    objectType: { type: 'string', enum: [...OBJECT_KINDS] },
    operation: { type: 'string', enum: ['POST', 'PUT', 'DELETE'] },
    objectID: { type: 'string' },
    state: { type: 'string', enum: [...STATES] },
    attempts: { type: 'integer', description: 'Delivery attempts made.' },
    lastStatus: { type: ['integer', 'null'], description: 'HTTP status of the last answer, if any.' },
    lastError: { type: ['string', 'null'], description: 'Why the last failed attempt failed.' },
    createdAt: dateTime,
    nextAttemptAt: { type: ['string', 'null'], format: 'date-time', description: 'When a pending notification is tried next.' },
    deliveredAt: { type: ['string', 'null'], format: 'date-time' },
  },
  ['id', 'organizationId', 'subscriptionID', 'callbackUrl', 'objectType', 'operation', 'objectID', 'state', 'attempts', 'lastStatus', 'lastError', 'createdAt', 'nextAttemptAt', 'deliveredAt'],
  { title: 'VtnNotificationStatus' },
);

/** A 3.1.0 webhook body (the document's `notification`, with our notificationID). */
const notification31Schema = objectSchema(
  {
    notificationID: { type: 'string', format: 'uuid' },
    objectType: { type: 'string', enum: [...OBJECT_KINDS] },
    operation: { type: 'string', enum: ['CREATE', 'UPDATE', 'DELETE'] },
    object: { type: 'object', additionalProperties: true, description: 'The object after the change, in its 3.1.0 representation.' },
    targets: { type: ['array', 'null'], items: { type: 'string' } },
  },
  ['notificationID', 'objectType', 'operation', 'object', 'targets'],
  { title: 'VtnNotification31' },
);

const detailSchema = objectSchema(
  {
    ...(notificationStatusSchema.properties as Record<string, unknown>),
    openadrVersion: { type: 'string', enum: ['3.0.1', '3.1.0'], description: 'The version the notification is sent in (that of the surface that last wrote its subscription).' },
    body: { anyOf: [notificationSchema, notification31Schema], description: 'Exactly the body the receiver gets (was sent, or will be): 3.0.1 or 3.1.0 as `openadrVersion` says.' },
  },
  [...(notificationStatusSchema.required as string[]), 'openadrVersion', 'body'],
  { title: 'VtnNotificationDetail' },
);

const COLUMNS = `n.notification_id AS id, n.organization_id AS "organizationId", n.subscription_id AS "subscriptionID", n.callback_url AS "callbackUrl",
  c.object_type AS "objectType", c.operation, c.object_id AS "objectID", n.state, n.attempts, n.last_status AS "lastStatus", n.last_error AS "lastError",
  n.created_at AS "createdAt", CASE WHEN n.state = 'pending' THEN n.next_attempt_at END AS "nextAttemptAt", n.delivered_at AS "deliveredAt"`;
const FROM = 'vtn_notifications n JOIN vtn_changes c ON c.id = n.change_id';
const idParams = objectSchema({ notificationId: { type: 'string', format: 'uuid' } }, ['notificationId']);

const MQTT_STATES = ['pending', 'published'] as const;

const mqttMessageSchema = objectSchema(
  {
    id: { type: 'integer', description: 'Outbox order: messages are published in this order.' },
    organizationId: int32Id,
    objectType: { type: 'string', enum: [...OBJECT_KINDS] },
    operation: { type: 'string', enum: ['CREATE', 'UPDATE', 'DELETE'] },
    objectID: { type: 'string' },
    topicCount: { type: 'integer', description: 'Topics the message goes to (per-VEN topics included).' },
    topics: arrayOf({ type: 'string' }, { description: 'The first 20 topics.' }),
    state: { type: 'string', enum: [...MQTT_STATES] },
    attempts: { type: 'integer', description: 'Publishing attempts (a failed one leaves it pending).' },
    lastError: { type: ['string', 'null'], description: 'Why the last attempt failed (broker down, no acknowledgement).' },
    createdAt: dateTime,
    publishedAt: { type: ['string', 'null'], format: 'date-time', description: 'When the broker acknowledged every topic.' },
  },
  ['id', 'organizationId', 'objectType', 'operation', 'objectID', 'topicCount', 'topics', 'state', 'attempts', 'lastError', 'createdAt', 'publishedAt'],
  { title: 'VtnMqttMessageStatus' },
);

interface MqttListQuery {
  state?: string;
  organizationId?: number;
  limit: number;
  offset: number;
}

interface ListQuery {
  state?: string;
  organizationId?: number;
  subscriptionID?: string;
  limit: number;
  offset: number;
}

const WHERE = 'WHERE ($1::text IS NULL OR n.state = $1) AND ($2::int IS NULL OR n.organization_id = $2) AND ($3::text IS NULL OR n.subscription_id = $3)';

async function list(db: Queryable, q: ListQuery): Promise<Page<unknown>> {
  const filters = [q.state ?? null, q.organizationId ?? null, q.subscriptionID ?? null];
  const [page, count] = await Promise.all([
    db.query(`SELECT ${COLUMNS} FROM ${FROM} ${WHERE} ORDER BY n.id LIMIT $4 OFFSET $5`, [...filters, q.limit, q.offset]),
    db.query<{ total: number }>(`SELECT count(*) AS total FROM vtn_notifications n ${WHERE}`, filters),
  ]);
  return { items: page.rows, total: count.rows[0]!.total };
}

/** Notifications per state (flex_vtn_notifications). */
export async function notificationsByState(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ state: string; n: number }>('SELECT state, count(*) AS n FROM vtn_notifications GROUP BY state');
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/** Seconds since the oldest pending notification was created, 0 when none is pending. */
export async function oldestPendingNotificationSeconds(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ age: number | null }>("SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM vtn_notifications WHERE state = 'pending'");
  return Math.max(0, rows[0]?.age ?? 0);
}

export function notificationAdminRoutes(db: Queryable, onRetry: () => void): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/admin/mqtt-messages',
      summary: 'List the VTN’s MQTT notifications',
      description:
        'The MQTT outbox, oldest first: one message per change with its topics; pending until the broker acknowledged it (QoS 1), then published. Filter by state and organization. X-Total-Count gives the number matching the filters across all pages.',
      tags: TAGS,
      auth: ADMIN,
      query: querySchema({ state: { type: 'string', enum: [...MQTT_STATES] }, organizationId: int32Id, ...pageQueryProperties }),
      responses: { 200: { description: 'The messages', schema: arrayOf(mqttMessageSchema), headers: totalCountHeader } },
      handler: async (req: ApiRequest<unknown, MqttListQuery>) => {
        const q = req.query;
        const where = 'WHERE ($1::text IS NULL OR state = $1) AND ($2::int IS NULL OR organization_id = $2)';
        const filters = [q.state ?? null, q.organizationId ?? null];
        const [page, count] = await Promise.all([
          db.query(
            `SELECT id::int AS id, organization_id AS "organizationId", object_type AS "objectType", operation, object_id AS "objectID", cardinality(topics) AS "topicCount",
               topics[1:20] AS topics, state, attempts, last_error AS "lastError", created_at AS "createdAt", published_at AS "publishedAt"
             FROM vtn_mqtt_messages ${where} ORDER BY id LIMIT $3 OFFSET $4`,
            [...filters, q.limit, q.offset],
          ),
          db.query<{ total: number }>(`SELECT count(*) AS total FROM vtn_mqtt_messages ${where}`, filters),
        ]);
        return pageReply({ items: page.rows, total: count.rows[0]!.total });
      },
    },
    {
      method: 'GET',
      path: '/api/admin/notifications',
      summary: 'List VTN webhook notifications',
      description: 'Oldest first. Filter by state (pending, delivered, dead), organization and subscription. X-Total-Count gives the number matching the filters across all pages.',
      tags: TAGS,
      auth: ADMIN,
      query: querySchema({
        state: { type: 'string', enum: [...STATES] },
        organizationId: int32Id,
        subscriptionID: objectId,
        ...pageQueryProperties,
      }),
      responses: { 200: { description: 'The notifications', schema: arrayOf(notificationStatusSchema), headers: totalCountHeader } },
      handler: async (req: ApiRequest<unknown, ListQuery>) => pageReply(await list(db, req.query)),
    },
    {
      method: 'GET',
      path: '/api/admin/notifications/:notificationId',
      summary: 'Get a VTN webhook notification with the body it sends',
      tags: TAGS,
      auth: ADMIN,
      params: idParams,
      responses: { 200: { description: 'The notification', schema: detailSchema } },
      handler: async (req: ApiRequest<{ notificationId: string }>) => {
        const { rows } = await db.query<Record<string, unknown> & { source: Omit<BodySource, 'notificationId'> }>(
          `SELECT ${COLUMNS}, n.openadr_version AS "openadrVersion",
             json_build_object('objectType', c.object_type, 'operation', c.operation, 'object', c.object::text, 'targets', c.targets::text,
               'openadrVersion', n.openadr_version, 'ext', c.ext, 'clientId', c.client_id) AS source
           FROM ${FROM} WHERE n.notification_id = $1`,
          [req.params.notificationId],
        );
        const row = rows[0];
        if (!row) throw notFound(`Notification ${req.params.notificationId}`);
        // The dispatcher's own body function: what the receiver gets, in its version.
        const { source, ...status } = row;
        const body = JSON.parse(webhookBody({ ...source, notificationId: row.id as string })) as unknown;
        return { status: 200, body: { ...status, body } };
      },
    },
    {
      method: 'POST',
      path: '/api/admin/notifications/:notificationId/retry',
      summary: 'Retry a dead VTN webhook notification',
      description: 'Puts a dead notification back in its subscription’s queue with a fresh attempt count; it is sent next for that subscription. 409 unless it is dead.',
      tags: TAGS,
      auth: ADMIN,
      params: idParams,
      responses: { 200: { description: 'The notification, pending again', schema: notificationStatusSchema } },
      handler: async (req: ApiRequest<{ notificationId: string }>) => {
        const { rows } = await db.query(
          `WITH retried AS (
             UPDATE vtn_notifications SET state = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL, locked_by = NULL, updated_at = now()
             WHERE notification_id = $1 AND state = 'dead' RETURNING *
           )
           SELECT ${COLUMNS} FROM retried n JOIN vtn_changes c ON c.id = n.change_id`,
          [req.params.notificationId],
        );
        if (!rows[0]) {
          const exists = await db.query('SELECT state FROM vtn_notifications WHERE notification_id = $1', [req.params.notificationId]);
          if (!exists.rows[0]) throw notFound(`Notification ${req.params.notificationId}`);
          throw conflict(`Notification ${req.params.notificationId} is ${exists.rows[0].state}; only dead notifications can be retried`);
        }
        onRetry();
        return { status: 200, body: rows[0] };
      },
    },
  ];
}
