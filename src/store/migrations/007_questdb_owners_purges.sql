-- The QuestDB store with several Flex instances on one PostgreSQL, and the purge of deleted
-- registers' rows (docs/questdb.md, "Several instances" and "Delete").
--
-- timeseries_pending_batches gains what a writer needs to keep journal order: the registers of a
-- batch and its time span. A batch is owned by the session that holds its advisory lock (taken
-- by the INSERT that journals it, held until the batch is applied); an entry whose lock nobody
-- holds is an orphan (its writer died or gave up) and is replayed, before any later batch that
-- overlaps it is sent. Entries journaled before this migration have no registers: they are
-- replayed at start as before.
ALTER TABLE timeseries_pending_batches
  ADD COLUMN register_ids bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN first_ms double precision NOT NULL DEFAULT '-Infinity',
  ADD COLUMN last_ms double precision NOT NULL DEFAULT 'Infinity';

-- timeseries_purges: a QuestDB partition being rewritten without the rows of deleted registers.
-- A row here means: the partition's rows to keep are copied, verified, in `scratch` (`kept`
-- rows), and the partition may already be dropped. Until the row is gone, no write enters the
-- partition (writers check this table after taking the partition's advisory lock) and whoever
-- finds it finishes the purge: drop the partition, insert `scratch` back, verify, delete the row,
-- drop `scratch`. Repeating those steps is harmless, so a SIGKILL at any point loses nothing.
CREATE TABLE timeseries_purges (
  table_name text NOT NULL,
  partition text NOT NULL,
  scratch text NOT NULL,
  register_ids bigint[] NOT NULL,
  kept bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (table_name, partition)
);
