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
