// Prometheus metrics about what the platform does (the HTTP, process and pool metrics are in
// src/http/metrics.ts, on the same registry): readings ingested and refused, batch sizes, ingest
// and query latency by backend and resolution, the periodic jobs (clearing, delivery
// validation), and gauges read from the database at scrape time (webhook notifications by state,
// the oldest pending one's age, the delivery-validation backlog). Names follow prom-client's and
// Prometheus' conventions: `flex_` prefix, base units (seconds), `_total` on counters. Labels are
// bounded sets (backend, a few resolutions, reasons, job names): never ids or raw paths.
// docs/grafana/flex-dashboard.json shows them; test/integration/domainMetrics.test.ts checks that every
// metric the dashboard queries is on /metrics.
import client from 'prom-client';
import type { Logger } from 'pino';

/** Why a POST /api/readings batch was refused (the batch, all or nothing). */
export const REFUSAL_REASONS = ['malformed', 'content_type', 'unknown_series', 'invalid_values', 'error'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Resolutions with a label of their own; any other bucket length is `other`, 0 is `stored`. */
const RESOLUTION_LABELS = new Set([60, 300, 900, 1800, 3600, 86400]);
export function resolutionLabel(seconds: number): string {
  if (seconds === 0) return 'stored';
  return RESOLUTION_LABELS.has(seconds) ? String(seconds) : 'other';
}

export const NOTIFICATION_STATES = ['pending', 'delivered', 'dead'] as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the scrape-time gauges read (SQL lives with the domains that own the tables). */
export interface DomainGaugeSources {
  /** Notifications per state. */
  notificationsByState(): Promise<Record<string, number>>;
  /** Seconds since the oldest pending notification was created; 0 when none is pending. */
  oldestPendingNotificationSeconds(): Promise<number>;
  /** Flexibility transactions due for delivery validation now. */
  validationBacklog(): Promise<number>;
}

export class DomainMetrics {
  readonly readingsIngested: client.Counter<'backend'>;
  readonly batchesRefused: client.Counter<'reason'>;
  readonly batchSize: client.Histogram<'backend'>;
  readonly ingestDuration: client.Histogram<'backend'>;
  readonly queryDuration: client.Histogram<'backend' | 'resolution'>;
  readonly queryBytes: client.Counter<'backend' | 'resolution'>;
  readonly jobRuns: client.Counter<'job' | 'outcome'>;
  readonly jobDuration: client.Histogram<'job'>;
  readonly jobItems: client.Counter<'job'>;

  constructor(
    private readonly registry: client.Registry,
    readonly backend: string,
  ) {
    const registers = [registry];
    // Durations in seconds, all on the same buckets so that their panels compare.
    const latency = <L extends string>(name: string, help: string, labelNames: L[]) => new client.Histogram<L>({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers });
    this.readingsIngested = new client.Counter({ name: 'flex_readings_ingested_total', help: 'Readings stored through POST /api/readings', labelNames: ['backend'], registers });
    this.batchesRefused = new client.Counter({
      name: 'flex_readings_batches_refused_total',
      help: 'POST /api/readings batches refused (nothing stored), by reason: malformed JSON, content type, unknown or inaccessible meter/register, invalid values, error',
      labelNames: ['reason'],
      registers,
    });
    this.batchSize = new client.Histogram({
      name: 'flex_readings_batch_size',
      help: 'Readings per stored POST /api/readings batch',
      labelNames: ['backend'],
      buckets: [1, 10, 100, 1000, 10_000, 100_000, 1_000_000],
      registers,
    });
    this.ingestDuration = latency('flex_readings_ingest_duration_seconds', 'Time to parse, validate and store a POST /api/readings batch (body received to committed)', ['backend']);
    this.queryDuration = latency(
      'flex_readings_query_duration_seconds',
      'Time to answer GET /api/readings (and hourly averages) by backend and resolution (stored = as stored)',
      ['backend', 'resolution'],
    );
    this.queryBytes = new client.Counter({
      name: 'flex_readings_query_bytes_total',
      help: 'Bytes of JSON (before compression) answered by GET /api/readings, by backend and resolution',
      labelNames: ['backend', 'resolution'],
      registers,
    });
    this.jobRuns = new client.Counter({ name: 'flex_job_runs_total', help: 'Steps of periodic jobs by outcome (clearing, delivery-validation, reading-versions-purge; questdb-replay, questdb-purge on QuestDB)', labelNames: ['job', 'outcome'], registers });
    this.jobDuration = latency('flex_job_duration_seconds', 'Duration of one periodic job step', ['job']);
    this.jobItems = new client.Counter({
      name: 'flex_job_items_total',
      help: 'Items handled by periodic jobs: availability orders cleared, transactions validated, orphaned journal batches replayed, purge steps done',
      labelNames: ['job'],
      registers,
    });
    // Series that exist from the start, at zero, so dashboards and alerts see them before the first event.
    this.readingsIngested.labels(backend).inc(0);
    for (const reason of REFUSAL_REASONS) this.batchesRefused.labels(reason).inc(0);
  }

  /** Creates a periodic job's series at zero (PeriodicJob calls this when it starts), so that
   * dashboards and alerts see every job of this instance before its first step. */
  declareJob(job: string): void {
    this.jobRuns.labels(job, 'ok').inc(0);
    this.jobRuns.labels(job, 'failed').inc(0);
    this.jobItems.labels(job).inc(0);
  }

  /** Observes one periodic job step (PeriodicJob calls this). */
  observeJob(job: string, seconds: number, items: number, failed: boolean): void {
    this.jobRuns.labels(job, failed ? 'failed' : 'ok').inc();
    this.jobDuration.labels(job).observe(seconds);
    if (items > 0) this.jobItems.labels(job).inc(items);
  }

  /** Registers the gauges read from the database at scrape time. A failing read keeps the last
   * value (and is logged at debug): /metrics must answer while the database is away. These are
   * the same on every instance: aggregate them with max(), not sum(). */
  watch(sources: DomainGaugeSources, log: Logger): void {
    const registers = [this.registry];
    const guarded = async (what: string, read: () => Promise<void>) => {
      try {
        await read();
      } catch (err) {
        log.debug({ err, metric: what }, 'metric read failed');
      }
    };
    new client.Gauge({
      name: 'flex_vtn_notifications',
      help: 'VTN webhook notifications by state (pending, delivered, dead); the same on every instance',
      labelNames: ['state'],
      registers,
      async collect() {
        await guarded('flex_vtn_notifications', async () => {
          const counts = await sources.notificationsByState();
          for (const state of NOTIFICATION_STATES) this.labels(state).set(counts[state] ?? 0);
        });
      },
    });
    new client.Gauge({
      name: 'flex_vtn_notification_oldest_pending_age_seconds',
      help: 'Age of the oldest pending VTN webhook notification (0 when none is pending)',
      registers,
      async collect() {
        await guarded('flex_vtn_notification_oldest_pending_age_seconds', async () => this.set(await sources.oldestPendingNotificationSeconds()));
      },
    });
    new client.Gauge({
      name: 'flex_delivery_validation_backlog',
      help: 'Flexibility transactions due for delivery validation now (past VALIDATION_DELAY_MS, or retries that fell due)',
      registers,
      async collect() {
        await guarded('flex_delivery_validation_backlog', async () => this.set(await sources.validationBacklog()));
      },
    });
  }
}
