-- State of the QuestDB time-series store kept in PostgreSQL (docs/questdb.md).
--
-- timeseries_pending_batches: the journal of batches being written to QuestDB. A batch (the
-- parsed, validated, resolved rows of one POST /api/readings, or rows of an import) is committed
-- here before any of it is sent; it is sent in chunks over several connections (each chunk one
-- QuestDB transaction), and its row is deleted once every chunk is acknowledged and applied. A
-- row still here at start (Flex killed mid-request) or after a failed send (QuestDB restarting)
-- is sent again in full: QuestDB's DEDUP UPSERT KEYS(ts, register_id) make a re-sent row replace
-- itself, and updated_at comes from the journal, so a replay ends in exactly the batch's rows.
-- `rows` holds the columns packed (src/store/timeseries/questdb/journal.ts: regular series as start
-- and step, ~8 bytes a reading), stored without TOAST compression.
CREATE TABLE timeseries_pending_batches (
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at_ms double precision NOT NULL,
  readings int NOT NULL,
  rows bytea NOT NULL
);
ALTER TABLE timeseries_pending_batches ALTER COLUMN rows SET STORAGE EXTERNAL;

-- timeseries_tombstones: registers whose readings were deleted. QuestDB has no row DELETE;
-- reads leave out a tombstoned register's rows (register ids are never reused, and a deleted
-- register takes no writes), so the table is never rewritten and rows of other registers written
-- meanwhile stay.
CREATE TABLE timeseries_tombstones (
  register_id bigint PRIMARY KEY,
  deleted_at timestamptz NOT NULL
);
