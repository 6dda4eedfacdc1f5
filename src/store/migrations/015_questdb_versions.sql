-- Reading versions on the QuestDB store (docs/questdb.md, "Versions").
--
-- timeseries_write_clock: one row, updated by the statement that journals a batch. Its row lock
-- makes journal entries commit one after another, so journal order (the entry's id) is the order
-- of commits: a batch sees every older entry that could write the same readings, and waits for
-- it. `last_ms` gives each batch its recordedAt (`updated_at_ms`): the database's clock, but
-- always after the previous batch's, so the versions of a reading are recorded in the order they
-- were written and an `asOf` answer is what a read at that instant saw.
CREATE TABLE timeseries_write_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  last_ms bigint NOT NULL
);
INSERT INTO timeseries_write_clock (last_ms) VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);

-- versions_kept: the values this batch replaces are copied into the versions table, so none of
-- it has been sent before this turns true, and a replay after it does not copy the batch's own
-- rows as replaced ones. Entries an older Flex left (true here) are replayed without copying:
-- versions are kept from the upgrade on.
ALTER TABLE timeseries_pending_batches ADD COLUMN versions_kept boolean NOT NULL DEFAULT true;
ALTER TABLE timeseries_pending_batches ALTER COLUMN versions_kept SET DEFAULT false;
