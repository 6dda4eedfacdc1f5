// Chooses the time-series backend from the configuration. The store uses the worker pool for
// the CPU work of writes (parsing and encoding bodies in the backend's wire format).
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Pool } from '../database.ts';
import type { WorkerPool } from '../../workerPool.ts';
import { convertBlocks } from './postgres/convertBlocks.ts';
import { convertRows } from './postgres/convertRows.ts';
import { PostgresTimeSeriesStore } from './postgres/store.ts';
import type { IlpProtocolSetting } from './questdb/ilpSender.ts';
import type { Retention } from '../../shared/readings/retention.ts';
import type { TimeSeriesStore } from './types.ts';

export interface TimeSeriesConfig {
  backend: 'postgres' | 'questdb';
  questdbHttpUrl?: string;
  questdbPgUrl?: string;
  /** QUESTDB_ILP_PROTOCOL_VERSION: `auto` (default), 1, 2 or 3. */
  questdbIlpProtocolVersion?: IlpProtocolSetting;
  /** QUESTDB_TABLE: the readings table in QuestDB. */
  questdbTable?: string;
  /** QUESTDB_WRITE_CONNECTIONS: ILP requests in flight per batch. */
  questdbWriteConnections?: number;
  /** QUESTDB_PURGE_INTERVAL_MS: how often deleted registers' rows are purged (0: never). */
  questdbPurgeIntervalMs?: number;
  /** How many parts a large PostgreSQL read is fetched in (QUERY_PARTS). */
  queryParts?: number;
  /** READING_VERSIONS_RETENTION: how long superseded reading versions are kept (default forever). */
  versionsRetention?: Retention;
}

/** The store's part of the platform configuration. */
export function timeSeriesConfig(config: Pick<Config, 'timeseriesBackend' | 'questdbHttpUrl' | 'questdbPgUrl' | 'questdbIlpProtocolVersion' | 'questdbTable' | 'questdbWriteConnections' | 'questdbPurgeIntervalMs' | 'queryParts' | 'readingVersionsRetention'>): TimeSeriesConfig {
  return {
    backend: config.timeseriesBackend,
    questdbHttpUrl: config.questdbHttpUrl,
    questdbPgUrl: config.questdbPgUrl,
    questdbIlpProtocolVersion: config.questdbIlpProtocolVersion,
    questdbTable: config.questdbTable,
    questdbWriteConnections: config.questdbWriteConnections,
    questdbPurgeIntervalMs: config.questdbPurgeIntervalMs,
    queryParts: config.queryParts,
    versionsRetention: config.readingVersionsRetention,
  };
}

export interface TimeSeriesDeps {
  /** The platform's PostgreSQL (readings live there with the postgres backend). */
  pool: Pool;
  workers: WorkerPool;
  log: Logger;
}

export async function createTimeSeriesStore(config: TimeSeriesConfig, deps: TimeSeriesDeps): Promise<TimeSeriesStore> {
  if (config.backend === 'questdb') {
    const { QuestDbTimeSeriesStore } = await import('./questdb/store.ts');
    return QuestDbTimeSeriesStore.connect(
      {
        httpUrl: config.questdbHttpUrl!,
        pgUrl: config.questdbPgUrl!,
        ilpProtocolVersion: config.questdbIlpProtocolVersion,
        table: config.questdbTable,
        connections: config.questdbWriteConnections,
        purgeIntervalMs: config.questdbPurgeIntervalMs,
        versionsRetention: config.versionsRetention,
      },
      deps,
    );
  }
  await convertRows(deps.pool, deps.log);
  await convertBlocks(deps.pool, deps.log);
  return new PostgresTimeSeriesStore(deps.pool, deps.workers, config.queryParts, config.versionsRetention);
}
