-- Meters (shared by organizations), their registers, and virtual register definitions.

CREATE TABLE meters (
  id serial PRIMARY KEY,
  external_id text NOT NULL UNIQUE CHECK (length(external_id) BETWEEN 1 AND 200),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  type int NOT NULL,
  longitude text,
  latitude text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A meter may be shared by several organizations (supplier, grid operator, flexibility provider).
CREATE TABLE meter_organizations (
  meter_id int NOT NULL REFERENCES meters (id) ON DELETE CASCADE,
  organization_id int NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (meter_id, organization_id)
);
CREATE INDEX meter_organizations_organization ON meter_organizations (organization_id, meter_id);

CREATE TABLE registers (
  id serial PRIMARY KEY,
  meter_id int NOT NULL REFERENCES meters (id),
  -- Unique per meter: POST /api/readings names a register by (meter externalId, register externalId).
  external_id text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  type int NOT NULL,
  measurement_type int NOT NULL,
  measurement_prefix int NOT NULL,
  default_resolution int NOT NULL CHECK (default_resolution > 0),
  update_frequency int NOT NULL CHECK (update_frequency > 0),
  is_virtual boolean NOT NULL DEFAULT false,
  -- IANA zone for day buckets (resolution 86400) and local-time rules.
  time_zone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (meter_id, external_id)
);
CREATE INDEX registers_external_id ON registers (external_id);

CREATE TABLE virtual_definitions (
  id serial PRIMARY KEY,
  register_id int NOT NULL UNIQUE REFERENCES registers (id) ON DELETE CASCADE,
  calculation_type int NOT NULL,
  baseline_algorithm_type int,
  time_zone text,
  constant double precision,
  sum_previous_values boolean NOT NULL DEFAULT false,
  expression text,
  -- The parsed expression (validated at creation), so reads never parse again.
  expression_ast jsonb,
  time_of_day time,
  source_registers int[] NOT NULL DEFAULT '{}'
);

-- Days with demand-response events or flexibility activations on a (source) register: baselines
-- leave them out of the similar days they average.
CREATE TABLE register_event_days (
  register_id int NOT NULL REFERENCES registers (id) ON DELETE CASCADE,
  day date NOT NULL,
  PRIMARY KEY (register_id, day)
);
