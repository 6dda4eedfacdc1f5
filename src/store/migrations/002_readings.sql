-- Readings for the PostgreSQL time-series store (the default backend).
-- Range-partitioned by month on ts; the primary key (register_id, ts) makes a register's readings
-- one contiguous index range per partition, so a one-register one-year query touches 12 index
-- ranges and only that register's rows. Partitions are created on demand by
-- flex_ensure_reading_partitions before a write. No foreign key to registers: ingestion checks
-- registers itself, and a per-row FK check would cost bulk loads dearly.
CREATE TABLE readings (
  register_id int NOT NULL,
  ts timestamptz NOT NULL,
  value double precision NOT NULL,
  resolution int NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (register_id, ts)
) PARTITION BY RANGE (ts);

CREATE FUNCTION flex_ensure_reading_partitions(months timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  m timestamptz;
  name text;
BEGIN
  FOREACH m IN ARRAY months LOOP
    m := date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    name := format('readings_%s', to_char(m AT TIME ZONE 'UTC', 'YYYYMM'));
    IF to_regclass(name) IS NULL THEN
      -- Serialize concurrent creators of the same partition.
      PERFORM pg_advisory_xact_lock(hashtext(name));
      IF to_regclass(name) IS NULL THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF readings FOR VALUES FROM (%L) TO (%L)', name, m, m + interval '1 month');
      END IF;
    END IF;
  END LOOP;
END $$;
