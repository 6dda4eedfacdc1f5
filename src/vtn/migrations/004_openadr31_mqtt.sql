-- OpenADR 3.1.0 beside 3.0.1 (docs/openadr-3.1.md).
--
-- 1. Fields only 3.1 has (a program's attributes, an event's duration) are kept beside the
--    3.0.1 document in `ext`, merged into what the 3.1 surface serves and left out of what
--    /api/openadr/v1 serves. NULL: none.
ALTER TABLE vtn_programs ADD COLUMN ext jsonb;
ALTER TABLE vtn_events ADD COLUMN ext jsonb;

-- 2. The MQTT outbox: one row per change, written in the transaction that made it (like the
--    webhook notifications), with the topics it goes to, computed then (privacy as of the
--    change). The publisher sends rows in id order, QoS 1, and marks them published once the
--    broker acknowledged every topic; until then (broker down) they wait here.
CREATE TABLE vtn_mqtt_messages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id int NOT NULL,
  object_type text NOT NULL,
  operation text NOT NULL, -- CREATE, UPDATE, DELETE
  object_id text NOT NULL,
  object json NOT NULL,    -- the 3.0.1 document as stored; mapped to 3.1 when published
  ext jsonb,
  client_id text,          -- clientID of reports, subscriptions, VENs and resources
  topics text[] NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'published')),
  attempts int NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX vtn_mqtt_messages_pending ON vtn_mqtt_messages (id) WHERE state = 'pending';
CREATE INDEX vtn_mqtt_messages_org ON vtn_mqtt_messages (organization_id, id);

-- 3. Webhooks in the version of the surface that wrote the subscription: a subscription created
--    or last replaced through the 3.1.0 surface is notified with 3.1 bodies (CRUD operation
--    names, string targets, clientID, 3.1-only fields), others with 3.0.1 bodies. Each
--    notification keeps the version it is to be sent in; each change keeps what 3.1 bodies need
--    beside the 3.0.1 document.
ALTER TABLE vtn_subscriptions ADD COLUMN openadr_version text NOT NULL DEFAULT '3.0.1' CHECK (openadr_version IN ('3.0.1', '3.1.0'));
ALTER TABLE vtn_notifications ADD COLUMN openadr_version text NOT NULL DEFAULT '3.0.1';
ALTER TABLE vtn_changes ADD COLUMN ext jsonb, ADD COLUMN client_id text;
