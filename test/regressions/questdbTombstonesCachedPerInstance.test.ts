// Regression: on QuestDB each Flex instance loaded the tombstones (deleted registers) once, at
// start, and afterwards knew only of the deletes it made itself. With several instances on one
// PostgreSQL and one QuestDB table (scale-out), a register deleted through one instance kept
// its readings on every other instance already running: reads, hourly buckets, the "changed
// since" probe of delivery validation and hasReadings all still saw them. Reads now ask
// PostgreSQL which of the registers asked for are deleted (docs/questdb.md, "Delete"). Runs
// against a real QuestDB when QUESTDB_HTTP_URL and QUESTDB_PG_URL are set; skipped (with the
// reason) otherwise.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { quarterHourRows, questdbStoreSetting } from '../support/questdbFixtures.ts';

const { httpUrl, pgUrl, table, workers, database } = questdbStoreSetting('regression_tombstones');
const log = pino({ level: 'silent' });

const rows = quarterHourRows;

describe.skipIf(!httpUrl || !pgUrl)('a register deleted through another Flex instance on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  it('has no readings on an instance that was already running', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const pool = await database();
    const open = () => QuestDbTimeSeriesStore.connect({ httpUrl: httpUrl!, pgUrl: pgUrl!, table, purgeIntervalMs: 0 }, { pool, workers, log });
    const first = await open();
    const second = await open();
    try {
      const start = Date.UTC(2031, 0, 1);
      const end = start + 10 * 86_400_000;
      await first.write({ rows: rows(1, start, 960), updatedAtMs: start });
      await first.write({ rows: rows(2, start, 960), updatedAtMs: start });
      // The second instance has read both registers (whatever it keeps, it has it now).
      expect((await second.readJson({ registerIds: [1, 2], start, end }, 10_000)).size).toBe(2);
      expect(await second.hasReadings(1)).toBe(true);

      await first.deleteRegister(1);

      expect(await second.hasReadings(1)).toBe(false);
      expect([...(await second.readJson({ registerIds: [1, 2], start, end }, 10_000)).keys()]).toEqual([2]);
      const series = await second.readSeries({ registerIds: [1, 2], start, end });
      expect(series.map((s) => [s.registerId, s.timestamps.length])).toEqual([
        [1, 0],
        [2, 960],
      ]);
      for (const registers of [[1], [1, 2]]) {
        const hourly = await second.bucketsJson({ registers: registers.map((id) => ({ id, aggregate: 'avg' as const, timeZone: 'UTC' })), start, end, resolutionSeconds: 3600 });
        expect([...hourly.keys()]).toEqual(registers.filter((id) => id !== 1));
      }
      const daily = await second.bucketsJson({ registers: [{ id: 1, aggregate: 'sum', timeZone: 'Europe/Amsterdam' }], start, end, resolutionSeconds: 86400 });
      expect(daily.size).toBe(0);
      expect(await second.changedSince([{ registerIds: [1], start, end, since: start - 1 }])).toEqual([false]);
      // The instance that deleted sees the same.
      expect(await first.hasReadings(1)).toBe(false);
      expect(await first.hasReadings(2)).toBe(true);
    } finally {
      await first.close();
      await second.close();
    }
  }, 120_000);
});
