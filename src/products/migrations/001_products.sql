-- Flexibility and availability products: orders, offers, transactions.
-- Quantities are numeric (exact decimals): availability in kW of capacity, flexibility in kWh of
-- energy over the delivery period. Prices are numeric amounts of the platform currency:
-- availability_price per kW for the period, activation_price and unit_price per kWh.

CREATE TABLE availability_orders (
  id serial PRIMARY KEY,
  organization_id int NOT NULL REFERENCES organizations (id),
  market_zone_id int NOT NULL REFERENCES market_zones (id),
  market_id int NOT NULL REFERENCES markets (id),
  substation_id int REFERENCES substations (id),
  resource_id int REFERENCES grid_resources (id),
  product_type int NOT NULL,
  start timestamptz NOT NULL,
  "end" timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  flexibility_orders_expire_at timestamptz,
  quantity numeric NOT NULL CHECK (quantity > 0),
  availability_price numeric NOT NULL CHECK (availability_price >= 0),
  impact numeric,
  clearing_status int NOT NULL DEFAULT 1,
  target_organization_ids int[] NOT NULL DEFAULT '{}',
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  cleared_at timestamptz,
  CHECK (start < "end"),
  CHECK (expires_at <= start)
);
CREATE INDEX availability_orders_zone_period ON availability_orders (market_zone_id, start);
CREATE INDEX availability_orders_due ON availability_orders (expires_at) WHERE clearing_status = 1;

CREATE TABLE availability_transactions (
  id serial PRIMARY KEY,
  availability_order_id int NOT NULL REFERENCES availability_orders (id),
  -- Seller: the provider owning the resource; buyer: the order's organization.
  seller_organization_id int NOT NULL REFERENCES organizations (id),
  buyer_organization_id int NOT NULL REFERENCES organizations (id),
  seller_created_by text NOT NULL,
  buyer_created_by text NOT NULL,
  resource_id int NOT NULL REFERENCES grid_resources (id),
  market_id int NOT NULL REFERENCES markets (id),
  substation_id int REFERENCES substations (id),
  product_type int NOT NULL,
  start timestamptz NOT NULL,
  "end" timestamptz NOT NULL,
  quantity numeric NOT NULL CHECK (quantity > 0),
  availability_price numeric NOT NULL,
  activation_price numeric NOT NULL,
  impact_value numeric,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivery_validation_status int NOT NULL DEFAULT 1,
  validated_at timestamptz,
  delivery_percentage numeric,
  delivered_quantity numeric,
  expected_delivered_quantity numeric,
  remuneration_percentage numeric
);
CREATE INDEX availability_transactions_seller ON availability_transactions (seller_organization_id, start);
CREATE INDEX availability_transactions_buyer ON availability_transactions (buyer_organization_id, start);
CREATE INDEX availability_transactions_due ON availability_transactions ("end") WHERE delivery_validation_status <> 2;

CREATE TABLE availability_offers (
  id serial PRIMARY KEY,
  availability_order_id int NOT NULL REFERENCES availability_orders (id),
  resource_id int NOT NULL REFERENCES grid_resources (id),
  organization_id int NOT NULL REFERENCES organizations (id),
  activation_price numeric NOT NULL CHECK (activation_price >= 0),
  min_quantity numeric NOT NULL CHECK (min_quantity > 0),
  max_quantity numeric NOT NULL CHECK (max_quantity >= min_quantity),
  impact_value numeric,
  expires_at timestamptz NOT NULL,
  clearing_status int NOT NULL DEFAULT 1,
  availability_transaction_id int REFERENCES availability_transactions (id),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (availability_order_id, resource_id)
);
CREATE INDEX availability_offers_resource ON availability_offers (resource_id);

CREATE TABLE flexibility_orders (
  id serial PRIMARY KEY,
  organization_id int NOT NULL REFERENCES organizations (id),
  market_zone_id int NOT NULL REFERENCES market_zones (id),
  market_id int NOT NULL REFERENCES markets (id),
  resource_id int REFERENCES grid_resources (id),
  product_type int NOT NULL,
  start timestamptz NOT NULL,
  "end" timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  unit_price numeric NOT NULL CHECK (unit_price >= 0),
  min_quantity numeric NOT NULL CHECK (min_quantity > 0),
  max_quantity numeric NOT NULL CHECK (max_quantity >= min_quantity),
  -- Never negative, even under concurrent acceptances (they decrement it conditionally).
  remaining_quantity numeric NOT NULL CHECK (remaining_quantity >= 0),
  target_organization_ids int[] NOT NULL DEFAULT '{}',
  flexibility_order_group_id int,
  availability_transaction_id int REFERENCES availability_transactions (id),
  flexibility_schedule_id int,
  availability_schedule_transaction_id int,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (start < "end"),
  CHECK (expires_at <= start)
);
CREATE INDEX flexibility_orders_zone_period ON flexibility_orders (market_zone_id, start);

CREATE TABLE flexibility_transactions (
  id serial PRIMARY KEY,
  transaction_correlation_id uuid NOT NULL DEFAULT gen_random_uuid(),
  flexibility_order_id int NOT NULL REFERENCES flexibility_orders (id),
  seller_organization_id int NOT NULL REFERENCES organizations (id),
  buyer_organization_id int NOT NULL REFERENCES organizations (id),
  seller_created_by text NOT NULL,
  buyer_created_by text NOT NULL,
  resource_id int NOT NULL REFERENCES grid_resources (id),
  market_id int NOT NULL REFERENCES markets (id),
  market_zone_id int NOT NULL REFERENCES market_zones (id),
  product_type int NOT NULL,
  start timestamptz NOT NULL,
  "end" timestamptz NOT NULL,
  quantity numeric NOT NULL CHECK (quantity > 0),
  unit_price numeric NOT NULL,
  availability_transaction_id int REFERENCES availability_transactions (id),
  flexibility_schedule_id int,
  availability_schedule_transaction_id int,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivery_validation_status int NOT NULL DEFAULT 1,
  validated_at timestamptz,
  delivery_percentage numeric,
  delivered_quantity numeric,
  reference_adjustment_quantity numeric,
  reference_reading_value numeric,
  validation_reading_value numeric,
  remuneration_percentage numeric
);
CREATE INDEX flexibility_transactions_seller ON flexibility_transactions (seller_organization_id, start);
CREATE INDEX flexibility_transactions_buyer ON flexibility_transactions (buyer_organization_id, start);
CREATE INDEX flexibility_transactions_zone ON flexibility_transactions (market_zone_id, start);
CREATE INDEX flexibility_transactions_resource ON flexibility_transactions (resource_id, start);
CREATE INDEX flexibility_transactions_availability ON flexibility_transactions (availability_transaction_id);
CREATE INDEX flexibility_transactions_due ON flexibility_transactions ("end") WHERE delivery_validation_status <> 2;
