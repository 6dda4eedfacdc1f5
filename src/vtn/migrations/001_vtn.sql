-- The demand-response VTN (OpenADR 3 objects) and its notification outbox.
--
-- Every object table is keyed by (organization_id, id): each organization is its own VTN
-- namespace. `doc` is the object exactly as the API serves it (type json keeps the text
-- verbatim, so reading it back costs a copy, not a re-serialization); the other columns are
-- the indexed copies of the fields that filters, ordering, uniqueness and references need.
-- `seq` is the creation order, the stable tie-breaker of every listing.
-- `target_keys` holds each target value as `type || chr(31) || value` for `&&` matching.
-- organization_id has no foreign key to the identity tables: domains do not reach into
-- each other's tables (DESIGN.md).

CREATE TABLE vtn_programs (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  program_name text NOT NULL,
  target_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id),
  CONSTRAINT vtn_programs_name_key UNIQUE (organization_id, program_name)
);
CREATE INDEX vtn_programs_order ON vtn_programs (organization_id, seq);
CREATE INDEX vtn_programs_targets ON vtn_programs USING gin (target_keys);

-- span_start/span_end: the event's time span derived from intervalPeriod and intervals
-- (docs/vtn.md); NULL means unbounded on that side.
CREATE TABLE vtn_events (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  program_id text NOT NULL,
  priority int,
  target_keys text[] NOT NULL DEFAULT '{}',
  span_start timestamptz,
  span_end timestamptz,
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id),
  -- No cascade: a program with events cannot be deleted (409).
  CONSTRAINT vtn_events_program_fkey FOREIGN KEY (organization_id, program_id) REFERENCES vtn_programs (organization_id, id)
);
-- The hot listing: events of one program in priority order (NULLs last), then creation.
CREATE INDEX vtn_events_by_program ON vtn_events (organization_id, program_id, priority, seq);
CREATE INDEX vtn_events_order ON vtn_events (organization_id, priority, seq);
CREATE INDEX vtn_events_targets ON vtn_events USING gin (target_keys);

-- Reports are records: they keep their programID/eventID even after the event is deleted.
-- owner_client_id is the credential (public client id) that created the report.
CREATE TABLE vtn_reports (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  program_id text NOT NULL,
  event_id text NOT NULL,
  client_name text NOT NULL,
  owner_client_id text NOT NULL,
  span_start timestamptz,
  span_end timestamptz,
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX vtn_reports_order ON vtn_reports (organization_id, seq);
CREATE INDEX vtn_reports_by_program ON vtn_reports (organization_id, program_id, seq);
CREATE INDEX vtn_reports_by_event ON vtn_reports (organization_id, event_id, seq);
CREATE INDEX vtn_reports_by_owner ON vtn_reports (organization_id, owner_client_id, seq);

-- object_operations: 'EVENT:POST'-style pairs of the objectOperations entries, for matching.
-- owner_is_ven: created by a VEN client, whose notifications are limited to what it may see.
CREATE TABLE vtn_subscriptions (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  program_id text NOT NULL,
  client_name text NOT NULL,
  owner_client_id text NOT NULL,
  owner_is_ven boolean NOT NULL,
  object_kinds text[] NOT NULL DEFAULT '{}',
  object_operations text[] NOT NULL DEFAULT '{}',
  target_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX vtn_subscriptions_order ON vtn_subscriptions (organization_id, seq);
CREATE INDEX vtn_subscriptions_operations ON vtn_subscriptions USING gin (object_operations);

-- client_id binds a VEN to the VTN credential (public client id) acting as that VEN.
CREATE TABLE vtn_vens (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  ven_name text NOT NULL,
  client_id text,
  target_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id),
  CONSTRAINT vtn_vens_name_key UNIQUE (organization_id, ven_name)
);
CREATE INDEX vtn_vens_order ON vtn_vens (organization_id, seq);
CREATE INDEX vtn_vens_client ON vtn_vens (organization_id, client_id);
CREATE INDEX vtn_vens_targets ON vtn_vens USING gin (target_keys);

-- Resources are part of their VEN (served nested in it) and go with it.
CREATE TABLE vtn_resources (
  organization_id int NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  ven_id text NOT NULL,
  resource_name text NOT NULL,
  target_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  modified_at timestamptz NOT NULL,
  doc json NOT NULL,
  PRIMARY KEY (organization_id, id),
  CONSTRAINT vtn_resources_name_key UNIQUE (organization_id, ven_id, resource_name),
  FOREIGN KEY (organization_id, ven_id) REFERENCES vtn_vens (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX vtn_resources_by_ven ON vtn_resources (organization_id, ven_id, seq);
CREATE INDEX vtn_resources_targets ON vtn_resources USING gin (target_keys);

-- The outbox. A change (object + operation) is written once, in the transaction that made it;
-- each matching subscription callback gets a notification row referring to it.
CREATE TABLE vtn_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id int NOT NULL,
  object_type text NOT NULL,
  operation text NOT NULL,
  object_id text NOT NULL,
  object json NOT NULL,
  targets json,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vtn_changes_created ON vtn_changes (created_at);

-- state: pending → delivered, or pending → dead after the retry limit or a permanent refusal.
-- locked_until/locked_by: the lease of the dispatcher delivering it (claimed with FOR UPDATE
-- SKIP LOCKED); an expired lease (crashed instance) makes the row claimable again.
CREATE TABLE vtn_notifications (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  notification_id uuid NOT NULL DEFAULT gen_random_uuid(),
  change_id bigint NOT NULL REFERENCES vtn_changes (id) ON DELETE CASCADE,
  organization_id int NOT NULL,
  subscription_id text NOT NULL,
  callback_url text NOT NULL,
  bearer_token text,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  locked_by text,
  last_status int,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  CONSTRAINT vtn_notifications_notification_id_key UNIQUE (notification_id)
);
-- Per-subscription queues: the head of each queue is its lowest pending id.
CREATE INDEX vtn_notifications_queue ON vtn_notifications (organization_id, subscription_id, id) WHERE state = 'pending';
CREATE INDEX vtn_notifications_state ON vtn_notifications (state, id);
CREATE INDEX vtn_notifications_change ON vtn_notifications (change_id);
