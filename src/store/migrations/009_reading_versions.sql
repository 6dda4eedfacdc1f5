-- Reading versions on the PostgreSQL store (docs/meter-data.md "Versions"): every value a
-- reading has had is kept with the instant it was recorded. A register-day block keeps its
-- current readings in `data` (each with the recordedAt of its value) and the versions they
-- superseded in `history` (format: src/shared/readings/codec.ts; NULL while the day has none), in
-- the same row, so a correction writes both in one update and costs bytes in proportion to the
-- readings it changed.
-- `history_min` is the earliest supersededAt in `history`: the retention purge
-- (READING_VERSIONS_RETENTION) looks for blocks with versions older than the limit through a
-- BRIN index on it. BRIN is a summarizing index, so updating the column keeps updates HOT.
ALTER TABLE reading_blocks ADD COLUMN history bytea, ADD COLUMN history_min float8;
CREATE INDEX reading_blocks_history_min ON reading_blocks USING brin (history_min) WITH (autosummarize = on);
