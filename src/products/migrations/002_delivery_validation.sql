-- Delivery validation bookkeeping (docs/products.md, "Delivery validation").
--   validation_attempted_at  when the job or an administrator last computed the transaction
--   validation_attempts      how many times (restart and multi-instance tests check "once")
--   next_validation_at       a Missing*/NotMeasurable transaction is retried from then on
--   readings_updated_at      the latest updatedAt of the readings the figures were computed
--                            from; a reading updated after it is a correction → re-validation
ALTER TABLE flexibility_transactions
  ADD COLUMN validation_attempted_at timestamptz,
  ADD COLUMN validation_attempts int NOT NULL DEFAULT 0,
  ADD COLUMN next_validation_at timestamptz,
  ADD COLUMN readings_updated_at timestamptz;

ALTER TABLE availability_transactions
  ADD COLUMN validation_attempted_at timestamptz,
  ADD COLUMN validation_attempts int NOT NULL DEFAULT 0,
  ADD COLUMN next_validation_at timestamptz;

-- The correction scan walks validated transactions that ended within VALIDATION_WINDOW_MS.
CREATE INDEX flexibility_transactions_validated ON flexibility_transactions ("end") WHERE delivery_validation_status = 2;
CREATE INDEX availability_transactions_validated ON availability_transactions ("end") WHERE delivery_validation_status = 2;
-- Other transactions of the same resource overlapping a period (reference adjustment): those
-- ending after its start — a handful for a recent period, however long the history.
CREATE INDEX flexibility_transactions_resource_end ON flexibility_transactions (resource_id, "end");

-- Settlement (docs/products.md, "Settlement specification"): each transaction's remuneration
-- and its settlement line as JSON text, kept by PostgreSQL whenever the row changes, so that a
-- settlement specification of 100,000 lines only sorts and concatenates.
--   remuneration = round(quantity × price × remunerationPercentage / 100, 2), half away from
--   zero (numeric round), 0 until validated.
ALTER TABLE flexibility_transactions
  ADD COLUMN remuneration_amount numeric GENERATED ALWAYS AS (
    CASE WHEN delivery_validation_status = 2 THEN round(quantity * unit_price * remuneration_percentage * 0.01, 2) ELSE 0 END) STORED,
  ADD COLUMN settlement_line text GENERATED ALWAYS AS (
    '{"flexibilityTransactionId":' || id::text || ',"resourceId":' || resource_id::text
    || ',"deliveryPercentage":' || coalesce(delivery_percentage::text, 'null') || ',"remunerationPercentage":' || coalesce(remuneration_percentage::text, 'null')
    || ',"unitPrice":' || unit_price::text
    || ',"totalRemuneration":' || (CASE WHEN delivery_validation_status = 2 THEN round(quantity * unit_price * remuneration_percentage * 0.01, 2) ELSE 0 END)::text
    || ',"totalQuantity":' || quantity::text || ',"productType":' || product_type::text || ',"deliveryValidationStatus":' || delivery_validation_status::text || '}') STORED;

ALTER TABLE availability_transactions
  ADD COLUMN remuneration_amount numeric GENERATED ALWAYS AS (
    CASE WHEN delivery_validation_status = 2 THEN round(quantity * availability_price * remuneration_percentage * 0.01, 2) ELSE 0 END) STORED,
  ADD COLUMN settlement_line text GENERATED ALWAYS AS (
    '{"availabilityTransactionId":' || id::text || ',"resourceId":' || resource_id::text || ',"substationId":' || coalesce(substation_id::text, 'null')
    || ',"deliveryPercentage":' || coalesce(delivery_percentage::text, 'null') || ',"remunerationPercentage":' || coalesce(remuneration_percentage::text, 'null')
    || ',"availabilityPrice":' || availability_price::text
    || ',"totalRemuneration":' || (CASE WHEN delivery_validation_status = 2 THEN round(quantity * availability_price * remuneration_percentage * 0.01, 2) ELSE 0 END)::text
    || ',"totalQuantity":' || quantity::text || ',"productType":' || product_type::text || ',"deliveryValidationStatus":' || delivery_validation_status::text || '}') STORED;
