-- Daily rollups at local midnight per register time zone (issue 12, PostgreSQL store): each
-- register-day block also keeps its readings summed per piece of its UTC day between the local
-- midnights of its register's zone (`days`; format in src/shared/readings/blocks.ts), so a
-- question in local days reads one or two values a day instead of 24 hourly slots. Kept in the
-- block's own row, so written in the same transaction as its readings and hourly rollups.
-- Blocks stored before this migration start with k = 0 ("not computed": readers use the hourly
-- rollups); src/store/timeseries/postgres/blockDays.ts computes them at start, register by
-- register, resumable, and again for all of a register's blocks in the transaction that changes
-- its time zone. Readers check every piece against the zone's local days as they are now, so a
-- piece that no longer matches (a zone changed, tzdata updated) is never summed into a wrong day.
ALTER TABLE reading_blocks ADD COLUMN days bytea NOT NULL DEFAULT '\x00000000'::bytea;

-- Registers whose blocks may still have k = 0: every stored register of an existing installation
-- (a register without blocks costs the conversion one empty look; rows of a former row table
-- become blocks at start before this runs). On a new installation the platform migrations run
-- before the meter ones and there is nothing to do. Emptied and dropped by fillMissingDays.
CREATE TABLE reading_block_days_pending (register_id int PRIMARY KEY);
DO $$
BEGIN
  IF to_regclass('registers') IS NOT NULL THEN
    INSERT INTO reading_block_days_pending SELECT id FROM registers WHERE NOT is_virtual;
  END IF;
END $$;
