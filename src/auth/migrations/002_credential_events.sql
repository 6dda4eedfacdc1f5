-- Who created, rotated or deleted which credential, and when: organization clients, VTN
-- credentials and personal access tokens. Never a secret, nor a part of one. No foreign keys: the
-- log outlives the credentials, users and organizations it names.
CREATE TABLE credential_events (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  action text NOT NULL CHECK (action IN ('create', 'rotate', 'delete')),
  credential_kind text NOT NULL CHECK (credential_kind IN ('organization_client', 'vtn_credential', 'personal_access_token')),
  -- api_clients.id, or users.id for a personal access token.
  credential_id int NOT NULL,
  -- The public client id, or the user's name.
  credential_name text NOT NULL,
  organization_id int,
  -- Principal.subject of the caller: its client id, or user:<id>.
  actor text NOT NULL,
  actor_organization_id int,
  request_id text NOT NULL
);
CREATE INDEX credential_events_organization ON credential_events (organization_id, id);
