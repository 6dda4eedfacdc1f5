// Regression: on QuestDB, deleting a register's readings rewrote the whole table (CREATE TABLE …
// AS SELECT, DROP, RENAME): it copied every row, and rows of other registers written while it ran
// were lost. A delete is now a tombstone honoured by reads. Runs against a real QuestDB when
// QUESTDB_HTTP_URL and QUESTDB_PG_URL are set; skipped (with the reason) otherwise.
import { pino } from 'pino';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quarterHourRows, questdbStoreSetting } from '../support/questdbFixtures.ts';

const { httpUrl, pgUrl, table, workers, database } = questdbStoreSetting('regression_delete');

const rows = quarterHourRows;

describe.skipIf(!httpUrl || !pgUrl)('deleting a register on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  it('keeps every row of other registers written while it deletes, and rewrites nothing', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const pool = await database();
    const store = await QuestDbTimeSeriesStore.connect({ httpUrl: httpUrl!, pgUrl: pgUrl!, table }, { pool, workers, log: pino({ level: 'silent' }) });
    try {
      const start = Date.UTC(2030, 0, 1);
      await store.write({ rows: rows(1, start, 5_000) });
      const tableId = async () => {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        const { rows: r } = await client.query(`SELECT id FROM tables() WHERE table_name = '${table}'`);
        await client.end();
        return r[0]?.id;
      };
      const before = await tableId();
      let written = 0;
      let deleting = true;
      const writer = (async () => {
        while (deleting || written < 5) {
          await store.write({ rows: rows(2, start + written * 96 * 900_000, 96) });
          written += 1;
        }
      })();
      await store.deleteRegister(1);
      deleting = false;
      await writer;
      expect(await store.hasReadings(1)).toBe(false);
      const [kept] = await store.readSeries({ registerIds: [2], start, end: start + 400 * 86_400_000 });
      expect(kept!.timestamps.length).toBe(written * 96);
      expect(await tableId()).toBe(before);
    } finally {
      await store.close();
    }
  }, 120_000);
});
