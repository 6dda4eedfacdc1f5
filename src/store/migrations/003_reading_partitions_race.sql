-- flex_ensure_reading_partitions, fixed for concurrent first writes into a new month (issue 9,
-- item 4: 15–30 concurrent POST /api/readings into a month without data answered 500 with
-- 42P07 relation "readings_YYYYMM" already exists).
-- Why 002's version raced: the creator that waited for the advisory lock re-checked with
-- to_regclass, which reads the backend's catalog cache. Taking an advisory lock does not make a
-- backend process catalog invalidations, so the cache still said "no such table" (even the
-- negative lookup of the first check is cached) after the winner had committed it, and the
-- waiter's CREATE TABLE failed. Now the re-check reads pg_class with the statement's own MVCC
-- snapshot (taken after the lock, so it sees the winner's commit), and should anything else
-- create the partition first, duplicate_table is taken as success: the partition exists, which
-- is all this function promises.
CREATE OR REPLACE FUNCTION flex_ensure_reading_partitions(months timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  m timestamptz;
  name text;
BEGIN
  FOREACH m IN ARRAY months LOOP
    m := date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    name := format('readings_%s', to_char(m AT TIME ZONE 'UTC', 'YYYYMM'));
    -- Fast path: the cache is right once the partition is known to this backend.
    CONTINUE WHEN to_regclass(name) IS NOT NULL;
    -- Serialize concurrent creators of the same partition.
    PERFORM pg_advisory_xact_lock(hashtext(name));
    CONTINUE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relname = name AND relnamespace = current_schema()::regnamespace);
    BEGIN
      EXECUTE format('CREATE TABLE %I PARTITION OF readings FOR VALUES FROM (%L) TO (%L)', name, m, m + interval '1 month');
    EXCEPTION WHEN duplicate_table THEN
      NULL;
    END;
  END LOOP;
END $$;
