-- Register-day blocks (issue 12): readings of the PostgreSQL store move from one row per reading
-- (`readings`, 002) to one row per register and UTC day holding that day's readings and their
-- hourly rollups; the format is described in workers/readings/blocks.ts and docs/meter-data.md.
-- UTC days, not local ones: a register's time zone can change (PUT) while its stored readings
-- stay; local days are answered from the hourly rollups (whole-hour offsets) plus, for zones at
-- 30/45-minute offsets, the readings of the one hour their midnight cuts (same row, no extra read).
-- Not partitioned: a register-year is 365 rows (not 35,040), and the primary key is the only index.
CREATE TABLE reading_blocks (
  register_id int NOT NULL,
  -- UTC day: days since 1970-01-01.
  day int NOT NULL,
  -- Readings in the block.
  n int NOT NULL CHECK (n > 0),
  -- Latest updatedAt of the block's readings (UTC ms): corrections found without decoding.
  updated_max float8 NOT NULL,
  data bytea NOT NULL,
  -- Per UTC hour with readings: count, sum, latest updatedAt (what queries read) ...
  hours bytea NOT NULL,
  -- ... and min, max (kept apart: queries do not ship them).
  extents bytea NOT NULL,
  PRIMARY KEY (register_id, day)
);

-- The `data` of a block from its readings in time order (offsets: ms since the UTC day began),
-- byte for byte what blocks.ts writes. Used to convert the row table (flex_convert_reading_rows).
CREATE FUNCTION flex_block_data(offs int[], res int[], upd float8[], vals float8[]) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
  WITH s AS (
    SELECT cardinality(offs) AS n,
      (cardinality(offs) = 1 OR (SELECT count(DISTINCT offs[i + 1] - offs[i]) = 1 FROM generate_series(1, cardinality(offs) - 1) i)) AS regular,
      (SELECT count(DISTINCT x) = 1 FROM unnest(res) x) AS one_res,
      (SELECT count(DISTINCT x) = 1 FROM unnest(upd) x) AS one_upd
  )
  SELECT '\x01'::bytea
    || set_byte('\x00'::bytea, 0, (CASE WHEN regular THEN 1 ELSE 0 END) | (CASE WHEN one_res THEN 2 ELSE 0 END) | (CASE WHEN one_upd THEN 4 ELSE 0 END))
    || int4send(n)
    || CASE WHEN regular THEN int4send(offs[1]) || int4send(CASE WHEN n > 1 THEN offs[2] - offs[1] ELSE 0 END)
       ELSE (SELECT string_agg(int4send(x), ''::bytea ORDER BY i) FROM unnest(offs) WITH ORDINALITY u(x, i)) END
    || CASE WHEN one_res THEN int4send(res[1]) ELSE (SELECT string_agg(int4send(x), ''::bytea ORDER BY i) FROM unnest(res) WITH ORDINALITY u(x, i)) END
    || CASE WHEN one_upd THEN float8send(upd[1]) ELSE (SELECT string_agg(float8send(x), ''::bytea ORDER BY i) FROM unnest(upd) WITH ORDINALITY u(x, i)) END
    || (SELECT string_agg(float8send(x), ''::bytea ORDER BY i) FROM unnest(vals) WITH ORDINALITY u(x, i))
  FROM s
$$;

-- Moves the rows of `readings` of up to `registers` registers (lowest ids first) into blocks, in
-- the caller's transaction: the rows are deleted as their blocks are inserted, so a conversion
-- cut anywhere resumes where it stopped (src/store/timeseries/postgres/convertRows.ts runs it
-- batch by batch at start, with progress, before the store serves). Returns the rows moved.
CREATE FUNCTION flex_convert_reading_rows(registers int) RETURNS bigint
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
    INSERT INTO reading_blocks (register_id, day, n, updated_max, data, hours, extents)
    SELECT db.register_id, db.day, db.n, db.updated_max, db.data, hb.hours, hb.extents FROM db JOIN hb USING (register_id, day)
    RETURNING n
  )
  SELECT coalesce(sum(n), 0) INTO moved FROM ins;
  RETURN moved;
END $$;
