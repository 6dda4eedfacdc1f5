-- Identity: organizations with features, roles with permissions, users with personal access
-- tokens, API clients (organization clients and VTN credentials) and the token signing key.

CREATE TABLE organizations (
  id serial PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  features text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_name_key ON organizations (lower(name));

CREATE TABLE roles (
  id serial PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  permissions text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX roles_name_key ON roles (lower(name));

CREATE TABLE users (
  id serial PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  organization_id int REFERENCES organizations (id),
  global_admin boolean NOT NULL DEFAULT false,
  -- The administrator created from ADMIN_TOKEN / DATA_DIR/admin-token; there is at most one.
  bootstrap boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (global_admin OR organization_id IS NOT NULL)
);
CREATE UNIQUE INDEX users_single_bootstrap ON users (bootstrap) WHERE bootstrap;
CREATE INDEX users_organization ON users (organization_id);

CREATE TABLE user_roles (
  user_id int NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role_id int NOT NULL REFERENCES roles (id),
  PRIMARY KEY (user_id, role_id)
);
CREATE INDEX user_roles_role ON user_roles (role_id);

-- Personal access tokens are 256-bit random strings; a SHA-256 digest is enough to store them
-- (no dictionary to attack) and lets every request find its token by index.
CREATE TABLE personal_access_tokens (
  id serial PRIMARY KEY,
  user_id int NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash bytea NOT NULL UNIQUE,
  hint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id);

-- Organization clients (kind 'organization', permissions through roles) and VTN credentials
-- (kind 'vtn', OpenADR scopes). Secrets are scrypt hashes. token_version is embedded in every
-- access token; bumping it (rotation, role change) or deleting the row revokes issued tokens.
CREATE TABLE api_clients (
  id serial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('organization', 'vtn')),
  organization_id int NOT NULL REFERENCES organizations (id),
  client_id text NOT NULL UNIQUE,
  client_name text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 200),
  secret_hash text NOT NULL,
  hint text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  token_version int NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_clients_organization ON api_clients (organization_id, kind);

CREATE TABLE api_client_roles (
  client_id int NOT NULL REFERENCES api_clients (id) ON DELETE CASCADE,
  role_id int NOT NULL REFERENCES roles (id),
  PRIMARY KEY (client_id, role_id)
);
CREATE INDEX api_client_roles_role ON api_client_roles (role_id);

-- The HS256 key used when JWT_SECRET is not configured, shared by every instance.
CREATE TABLE signing_keys (
  id text PRIMARY KEY,
  secret bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
