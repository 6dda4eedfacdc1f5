-- Market zones (with member organizations and their markets) and substations, for the products
-- work. A resource's market zone becomes a real reference.

CREATE TABLE market_zones (
  id serial PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  time_resolution int NOT NULL,
  order_quantity_resolution numeric NOT NULL CHECK (order_quantity_resolution > 0),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX market_zones_name_key ON market_zones (lower(name));

CREATE TABLE market_zone_organizations (
  market_zone_id int NOT NULL REFERENCES market_zones (id) ON DELETE CASCADE,
  organization_id int NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (market_zone_id, organization_id)
);
CREATE INDEX market_zone_organizations_organization ON market_zone_organizations (organization_id);

-- Markets of a zone (e.g. day-ahead, intraday); transactions and availability orders name one.
CREATE TABLE markets (
  id serial PRIMARY KEY,
  market_zone_id int NOT NULL REFERENCES market_zones (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  UNIQUE (market_zone_id, name)
);

-- Substations of a grid operator, and how strongly each resource's regulation reaches them
-- (impact factor: 1 = fully, 0.4 = 40 %, negative = the opposite direction).
CREATE TABLE substations (
  id serial PRIMARY KEY,
  organization_id int NOT NULL REFERENCES organizations (id),
  market_zone_id int NOT NULL REFERENCES market_zones (id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE substation_impacts (
  substation_id int NOT NULL REFERENCES substations (id) ON DELETE CASCADE,
  resource_id int NOT NULL REFERENCES grid_resources (id) ON DELETE CASCADE,
  factor numeric NOT NULL CHECK (factor BETWEEN -1 AND 1),
  PRIMARY KEY (substation_id, resource_id)
);
CREATE INDEX substation_impacts_resource ON substation_impacts (resource_id);

UPDATE grid_resources SET market_zone_id = NULL WHERE market_zone_id IS NOT NULL AND market_zone_id NOT IN (SELECT id FROM market_zones);
ALTER TABLE grid_resources ADD CONSTRAINT grid_resources_market_zone_fkey FOREIGN KEY (market_zone_id) REFERENCES market_zones (id);
