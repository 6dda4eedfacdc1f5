-- Platform-wide tables that belong to no domain.

-- Shared rate-limit counters (RATE_LIMIT_STORE=postgres), one row per key and fixed window.
CREATE UNLOGGED TABLE rate_limit_counters (
  key text NOT NULL,
  window_seconds int NOT NULL,
  window_start timestamptz NOT NULL,
  count int NOT NULL,
  PRIMARY KEY (key, window_seconds, window_start)
);
CREATE INDEX rate_limit_counters_expiry ON rate_limit_counters (window_start);
