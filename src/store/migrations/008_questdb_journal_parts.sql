-- The QuestDB store's pending-batch journal writes a batch's packed rows in parts, by one binary
-- COPY, instead of one bytea parameter (docs/questdb.md, "A write"). A 4 MB parameter cost
-- PostgreSQL three fresh 4 MB allocations (the message, the parameter, its copy), each one a page
-- fault per 4 KiB on the machines measured: a 1M-reading batch took 90–190 ms to journal, and
-- 30–50 ms as parts (docs/benchmarks-meter.md, QuestDB, eighth session).
--
-- An entry is now written in two steps, each its own transaction: the header (with its advisory
-- lock, so it is owned from the moment it is visible; its id is drawn at that commit, which keeps
-- journal order the order of commits), then its `parts` parts. Nothing of a batch is sent before
-- its parts commit, so an entry whose parts are missing (its writer died between the two steps)
-- was never sent and is dropped, not replayed. Entries of an older Flex keep their rows in `rows`.
ALTER TABLE timeseries_pending_batches
  ALTER COLUMN rows DROP NOT NULL,
  ADD COLUMN parts int NOT NULL DEFAULT 0;

CREATE TABLE timeseries_pending_batch_parts (
  batch_id bigint NOT NULL REFERENCES timeseries_pending_batches (id) ON DELETE CASCADE,
  seq int NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (batch_id, seq)
);
-- Packed rows barely compress; compressing them only costs time.
ALTER TABLE timeseries_pending_batch_parts ALTER COLUMN data SET STORAGE EXTERNAL;
