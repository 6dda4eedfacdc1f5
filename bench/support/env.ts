// What the meter-data benchmarks read from their environment: numeric settings with their
// defaults, BACKEND=questdb (the QuestDB mode of bench:ingest and bench:query) and the QuestDB
// URLs that mode needs.

/** Each setting from the environment variable of its name, else its default. */
export function numbers<T extends Record<string, number>>(defaults: T): T {
  return Object.fromEntries(Object.entries(defaults).map(([name, fallback]) => [name, Number(process.env[name] ?? fallback)])) as T;
}

/** With BACKEND=questdb, runs the QuestDB mode instead (`run` imports it) and exits. */
export async function questdbMode(run: () => Promise<unknown>): Promise<void> {
  if (process.env.BACKEND !== 'questdb') return;
  await run();
  process.exit(0);
}

/** QUESTDB_HTTP_URL and QUESTDB_PG_URL; without them the QuestDB mode says so and exits. */
export function questdbUrls(): { httpUrl: string; pgUrl: string } {
  const httpUrl = process.env.QUESTDB_HTTP_URL;
  const pgUrl = process.env.QUESTDB_PG_URL;
  if (!httpUrl || !pgUrl) {
    console.log('BACKEND=questdb needs QUESTDB_HTTP_URL and QUESTDB_PG_URL (a running QuestDB); nothing measured.');
    process.exit(0);
  }
  return { httpUrl, pgUrl };
}
