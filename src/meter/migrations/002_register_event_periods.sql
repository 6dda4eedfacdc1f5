-- Events on a (source) register with their times: a demand-response event or a flexibility
-- activation from `starts_at` to `ends_at`. Baselines leave the local days they touch out of
-- the similar days, and compare and adjust an event day over its event hours
-- (docs/virtual-registers.md, "Target day").
CREATE TABLE register_event_periods (
  register_id int NOT NULL REFERENCES registers (id) ON DELETE CASCADE,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL CHECK (ends_at > starts_at),
  PRIMARY KEY (register_id, starts_at, ends_at)
);
