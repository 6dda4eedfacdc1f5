// Background work every instance runs on a timer (order clearing, delivery validation, and on
// QuestDB the journal replay and the purge of deleted registers' rows; wired in src/app.ts). Each job's step claims its own rows (FOR UPDATE SKIP LOCKED), so several
// instances can run the same job; this class only schedules, logs and stops it.
import type { Logger } from 'pino';

/** Runs `work` every `intervalMs` (and again at once while it reports work done), until stopped. */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private busy = false;
  private again = false;

  constructor(
    private readonly name: string,
    private readonly work: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    /** Runs, durations and items of each step (flex_job_* in src/domainMetrics.ts). */
    private readonly metrics?: { declareJob(job: string): void; observeJob(job: string, seconds: number, items: number, failed: boolean): void },
  ) {}

  start(): void {
    this.metrics?.declareJob(this.name);
    this.schedule(0);
  }

  /** Run a step now (work was committed on this instance), or right after the running one. */
  kick(): void {
    if (this.stopped || this.timer === undefined) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick();
    }, delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.busy = true;
    this.again = false;
    let done = 0;
    let failed = false;
    const started = performance.now();
    try {
      done = await this.work();
      if (done > 0) this.log.info({ job: this.name, done }, 'job step');
    } catch (err) {
      failed = true;
      this.log.warn({ job: this.name, err }, 'job step failed; retrying later');
    }
    this.metrics?.observeJob(this.name, (performance.now() - started) / 1000, done, failed);
    this.busy = false;
    this.schedule(done > 0 || this.again ? 0 : this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
