// Chooses the time-series backend from the configuration.
import type { Logger } from 'pino';
import type { Pool } from '../database.ts';
import { PostgresTimeSeriesStore } from './postgresStore.ts';
import type { TimeSeriesStore } from './types.ts';

export interface TimeSeriesConfig {
  backend: 'postgres' | 'questdb';
  questdbHttpUrl?: string;
  questdbPgUrl?: string;
  /** How many parts a large PostgreSQL read is split into (QUERY_PARTS). */
  queryParts?: number;
}

export async function createTimeSeriesStore(config: TimeSeriesConfig, pool: Pool, log: Logger): Promise<TimeSeriesStore> {
  if (config.backend === 'questdb') {
    const { QuestDbTimeSeriesStore } = await import('./questdbStore.ts');
    return QuestDbTimeSeriesStore.connect(config.questdbHttpUrl!, config.questdbPgUrl!, log);
  }
  return new PostgresTimeSeriesStore(pool, config.queryParts);
}
