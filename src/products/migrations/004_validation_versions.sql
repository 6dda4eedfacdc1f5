-- Every delivery validation of a transaction, kept as a version (docs/products.md, "Versions
-- and asOf"): GET /api/product/transaction/{kind}/{id}/validations.
--   recorded_at      when it ran: the writer's settlement instant (migration 003), the same as
--                    the validatedAt and the settlement line version it produced
--   cause            0 inherited (figures present when versions began), 1 due (the job: first
--                    validation or retry), 2 correction (readings changed), 3 administrator
--   readings_as_of   the instant of the readings it used (flexibility: read then; availability:
--                    the latest of its calls')
--   attempts         runs with this same outcome: a retry by the job that finds what the
--                    previous version found counts here instead of adding a version
CREATE TABLE transaction_validations (
  kind smallint NOT NULL,            -- 1 flexibility, 2 availability
  transaction_id int NOT NULL,
  version int NOT NULL,
  recorded_at timestamptz NOT NULL,
  cause smallint NOT NULL,
  readings_as_of timestamptz,
  readings_updated_at timestamptz,
  status int NOT NULL,
  message text,
  reference_reading_value numeric,
  validation_reading_value numeric,
  reference_adjustment_quantity numeric,
  expected_delivered_quantity numeric,
  delivered_quantity numeric,
  delivery_percentage numeric,
  remuneration_percentage numeric,
  attempts int NOT NULL DEFAULT 1,
  last_attempt_at timestamptz NOT NULL,
  PRIMARY KEY (kind, transaction_id, version)
);

-- The readings instant of the current figures (an availability validation takes its calls').
ALTER TABLE flexibility_transactions ADD COLUMN readings_as_of timestamptz;
ALTER TABLE availability_transactions ADD COLUMN readings_as_of timestamptz;

-- Existing installations: the figures present become version 1 of each attempted transaction.
INSERT INTO transaction_validations (kind, transaction_id, version, recorded_at, cause, readings_updated_at, status, reference_reading_value, validation_reading_value,
    reference_adjustment_quantity, delivered_quantity, delivery_percentage, remuneration_percentage, attempts, last_attempt_at)
  SELECT 1, t.id, 1, coalesce(t.validation_attempted_at, t.validated_at, now()), 0, t.readings_updated_at, t.delivery_validation_status, t.reference_reading_value,
    t.validation_reading_value, t.reference_adjustment_quantity, t.delivered_quantity, t.delivery_percentage, t.remuneration_percentage, 1, coalesce(t.validation_attempted_at, t.validated_at, now())
  FROM flexibility_transactions t WHERE t.validation_attempts > 0 OR t.delivery_validation_status <> 1;
INSERT INTO transaction_validations (kind, transaction_id, version, recorded_at, cause, status, expected_delivered_quantity, delivered_quantity, delivery_percentage,
    remuneration_percentage, attempts, last_attempt_at)
  SELECT 2, t.id, 1, coalesce(t.validation_attempted_at, t.validated_at, now()), 0, t.delivery_validation_status, t.expected_delivered_quantity, t.delivered_quantity,
    t.delivery_percentage, t.remuneration_percentage, 1, coalesce(t.validation_attempted_at, t.validated_at, now())
  FROM availability_transactions t WHERE t.validation_attempts > 0 OR t.delivery_validation_status <> 1;
