-- Grid resources: units a flexibility provider offers, measured by an actual register and,
-- for delivery validation, a reference (register, posted reference readings, or zero).
CREATE TABLE grid_resources (
  id serial PRIMARY KEY,
  organization_id int NOT NULL REFERENCES organizations (id),
  -- Market zones and concession areas come with the products work; plain ids until then.
  market_zone_id int,
  concession_area_id int,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  connected_at timestamptz,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  longitude text,
  latitude text,
  contact_information text,
  type int NOT NULL,
  regulation_type int NOT NULL,
  max_quantity double precision NOT NULL CHECK (max_quantity >= 0),
  endurance int,
  cooldown int,
  use_zero_reference boolean NOT NULL DEFAULT false,
  actual_register_id int REFERENCES registers (id),
  reference_register_id int REFERENCES registers (id),
  conditional_delivery_limit double precision,
  conditional_use_dynamic_delivery_limit boolean NOT NULL DEFAULT false,
  conditional_automatic_acknowledgement boolean NOT NULL DEFAULT false,
  allowed_products int[] NOT NULL DEFAULT '{}',
  pods jsonb NOT NULL DEFAULT '[]',
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX grid_resources_organization ON grid_resources (organization_id, market_zone_id);
CREATE INDEX grid_resources_actual_register ON grid_resources (actual_register_id);
CREATE INDEX grid_resources_reference_register ON grid_resources (reference_register_id);
