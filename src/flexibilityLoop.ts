// The flexibility loop as the wiring file assembles it (docs/flexibility-loop.md): the domains it
// joins stay apart (DESIGN.md: products → grid → meter; the VTN stands alone), so what crosses
// between them is passed here as plain functions:
//   - grid bindings ask the VTN whether a VEN resource exists, and queue the resource's
//     transactions for dispatch when a binding changes;
//   - the dispatch job (products) has the VTN write the events in its claiming transaction;
//   - the usage job claims VEN reports (VTN), stores their usage as readings (grid, through the
//     time-series store) and records each report's processing state (VTN), in one transaction.
// Both jobs run on every instance; writes on this instance wake them at once.
import type { Logger } from 'pino';
import { bindingRoutes } from './grid/bindings.ts';
import { storeVenUsage } from './grid/venUsage.ts';
import type { RouteDef } from './http/types.ts';
import { PeriodicJob } from './jobs/periodicJob.ts';
import { dispatchDue, queueResource } from './products/dispatch.ts';
import { transactionChangeRoutes } from './products/transactionChanges.ts';
import { withTransaction, type Pool } from './store/database.ts';
import type { TimeSeriesStore } from './store/timeseries/types.ts';
import type { Vtn } from './vtn/vtn.ts';

type JobMetrics = ConstructorParameters<typeof PeriodicJob>[4];

export interface LoopDeps {
  pool: Pool;
  store: TimeSeriesStore;
  vtn: Vtn['flexibility'];
  log: Logger;
  dispatchIntervalMs: number;
  usageReportsIntervalMs: number;
  metrics?: JobMetrics;
}

/** Reports claimed per step of the usage job. */
const USAGE_BATCH = 20;

export function flexibilityLoop(deps: LoopDeps) {
  const { pool, vtn, log } = deps;
  const dispatching = new PeriodicJob('dispatch', () => dispatchDue(pool, vtn.writeDispatchEvents, log), deps.dispatchIntervalMs, log, deps.metrics);
  const usage = new PeriodicJob(
    'usage-reports',
    () =>
      withTransaction(pool, async (tx) => {
        const reports = await vtn.claimUsageReports(tx, USAGE_BATCH);
        const outcomes = [];
        for (const report of reports) {
          try {
            outcomes.push(...(await storeVenUsage({ pool, store: deps.store }, tx, [report])));
          } catch (err) {
            log.warn({ err: (err as Error).message, reportId: report.reportId }, 'storing VEN usage failed; retrying later');
            await vtn.postponeUsageReport(tx, report.organizationId, report.reportId, (err as Error).message);
          }
        }
        await vtn.recordUsageOutcomes(tx, outcomes);
        return reports.length;
      }),
    deps.usageReportsIntervalMs,
    log,
    deps.metrics,
  );
  const routes: RouteDef[] = [
    ...bindingRoutes({ pool, venResources: vtn.findVenResource, changed: queueResource, afterCommit: () => dispatching.kick() }),
    ...transactionChangeRoutes(pool),
    ...transactionChangeRoutes(pool, true),
  ];
  /** Routes whose success queued work for a job: the job is woken after their answer is ready. */
  const wakes = (route: RouteDef): PeriodicJob | undefined => {
    if (route.method === 'GET') return undefined;
    if (/\/orders?\/flexibility\/:orderId\/acceptance$|\/transactions?\/flexibility\/:transactionId(\/cancellation)?$/.test(route.path)) return dispatching;
    if ((route.method === 'POST' || route.method === 'PUT') && /\/reports(\/:reportID)?$/.test(route.path)) return usage;
    return undefined;
  };
  return {
    routes,
    /** Wraps the handlers of the routes that queue dispatches or usage reports. */
    wake(all: RouteDef[]): RouteDef[] {
      return all.map((route) => {
        const job = wakes(route);
        if (!job) return route;
        return {
          ...route,
          handler: async (req) => {
            const reply = await route.handler(req);
            job.kick();
            return reply;
          },
        };
      });
    },
    start(): void {
      dispatching.start();
      usage.start();
    },
    async stop(): Promise<void> {
      await dispatching.stop();
      await usage.stop();
    },
    /** Runs a dispatch step now (benchmarks, tests that write transactions directly). */
    kickDispatch: () => dispatching.kick(),
  };
}
