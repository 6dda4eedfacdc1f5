-- Compact register-day blocks (docs/meter-data.md "Block encoding"): a day's readings take about
-- a byte each instead of ~21 (times as steps from a common divisor, values as decimal integers or
-- XOR of doubles, recordedAt as runs: src/shared/readings/codec.ts), the hourly rollups and
-- extents go (the queries decode the readings faster than they read the rollups), the daily
-- pieces at local midnight stay, shorter. Columns in an order that wastes no alignment padding;
-- fillfactor 90 leaves room on each page, so a correction updates its block on the same page
-- (HOT) and the table does not grow by the blocks it rewrites.
--
-- Blocks stored in the first format move to the new table at start, before the store serves
-- (src/store/timeseries/postgres/convertBlocks.ts): batch after batch, each one transaction that
-- inserts the converted blocks and deletes the old ones, resumable, with progress; the old table
-- is dropped when empty.
ALTER TABLE reading_blocks RENAME TO reading_blocks_v1;
ALTER INDEX reading_blocks_pkey RENAME TO reading_blocks_v1_pkey;
ALTER INDEX reading_blocks_history_min RENAME TO reading_blocks_v1_history_min;

CREATE TABLE reading_blocks (
  -- The latest recordedAt of the current readings (UTC ms).
  updated_max float8 NOT NULL,
  -- The earliest supersededAt in history (UTC ms); NULL without history.
  history_min float8,
  register_id int NOT NULL,
  -- UTC day: days since 1970-01-01.
  day int NOT NULL,
  -- Current readings in the block.
  n int NOT NULL CHECK (n > 0),
  data bytea NOT NULL,
  days bytea NOT NULL,
  history bytea,
  PRIMARY KEY (register_id, day)
) WITH (fillfactor = 90);
CREATE INDEX reading_blocks_history_min ON reading_blocks USING brin (history_min) WITH (autosummarize = on);

-- The first format's daily pieces are computed again by the conversion.
DROP TABLE IF EXISTS reading_block_days_pending;

-- A row table left from before migration 004 converts into the first format (as before), then
-- on into the new one.
CREATE OR REPLACE FUNCTION flex_convert_reading_rows(registers int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  moved bigint;
BEGIN
  WITH ids AS (
    SELECT r.register_id FROM (SELECT DISTINCT register_id FROM readings ORDER BY register_id LIMIT registers) r
  ),
  gone AS (
    DELETE FROM readings x USING ids WHERE x.register_id = ids.register_id
    RETURNING x.register_id, round(extract(epoch FROM x.ts) * 1000)::bigint AS ms, x.value, x.resolution, round(extract(epoch FROM x.updated_at) * 1000)::float8 AS upd
  ),
  r AS (
    SELECT g.register_id, floor(g.ms / 86400000.0)::int AS day, g.ms, g.value, g.resolution, g.upd FROM gone g
  ),
  h AS (
    SELECT register_id, day, ((ms - day::bigint * 86400000) / 3600000)::int AS hour,
      count(*)::int AS c, sum(value) AS s, min(value) AS lo, max(value) AS hi, max(upd) AS u
    FROM r GROUP BY 1, 2, 3
  ),
  hb AS (
    SELECT register_id, day,
      int4send(sum(1 << hour)::int) || string_agg(int4send(c) || float8send(s) || float8send(u), ''::bytea ORDER BY hour) AS hours,
      string_agg(float8send(lo) || float8send(hi), ''::bytea ORDER BY hour) AS extents
    FROM h GROUP BY 1, 2
  ),
  db AS (
    SELECT register_id, day, count(*)::int AS n, max(upd) AS updated_max,
      flex_block_data(array_agg((ms - day::bigint * 86400000)::int ORDER BY ms), array_agg(resolution ORDER BY ms), array_agg(upd ORDER BY ms), array_agg(value ORDER BY ms)) AS data
    FROM r GROUP BY 1, 2
  ),
  ins AS (
    INSERT INTO reading_blocks_v1 (register_id, day, n, updated_max, data, hours, extents)
    SELECT db.register_id, db.day, db.n, db.updated_max, db.data, hb.hours, hb.extents FROM db JOIN hb USING (register_id, day)
    RETURNING n
  )
  SELECT coalesce(sum(n), 0) INTO moved FROM ins;
  RETURN moved;
END $$;
