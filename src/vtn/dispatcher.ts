// Delivers outbox notifications to subscription callbacks. It claims batches of queued
// notifications (deliveryQueue.ts: per subscription, the due head and the ones after it), sends
// each batch in order, one notification at a time, with up to `concurrency` subscriptions in
// parallel, and records each outcome: delivered; retried after a capped exponential backoff with
// full jitter (src/store/retry.ts, honouring a longer Retry-After), which also holds back the rest
// of that subscription's queue; or dead after `maxAttempts` or a permanent refusal (then visible
// and retryable in the admin API; the queue moves on).
//
// It wakes up when this instance commits notifications (kick), when a retry falls due, and every
// `pollMs` for rows written by other instances. Delivery is at least once: a receiver may see a
// notification again (after a timeout, a crash, a lost answer) and de-duplicates on
// `notificationID` / the X-Notification-Id header.
//
// Claiming one notification per subscription at a time cost a claim (~1.5 ms of PostgreSQL per
// 100 active subscriptions, plus planning) per delivery; batches of 16 brought the fan-out
// benchmark from ~1,000 to the figures in docs/benchmarks.md.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Pool } from '../store/database.ts';
import { backoffDelay, type BackoffPolicy } from '../store/retry.ts';
import { claimBatches, purgeDelivered, recordOutcomes, releaseLeases, type Claimed, type Outcome } from './deliveryQueue.ts';
import { notification31, to31 } from './v31/representation.ts';
import { WebhookClient, type DeliveryResult } from './webhookClient.ts';

export interface DispatcherOptions {
  /** Subscriptions delivered to at the same time. */
  concurrency: number;
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffPolicy;
  pollMs: number;
  allowInternal: boolean;
}

/** Notifications claimed per subscription at a time (sent one after the other). */
const PER_QUEUE = 16;
const PURGE_EVERY_MS = 10 * 60_000;
const KEEP_DELIVERED_DAYS = 7;
/** How long stop() lets deliveries in flight finish before cutting them short. */
const STOP_GRACE_MS = 5000;
/** Outcomes are written at most this long after they happen (one UPDATE for all). */
const FLUSH_DELAY_MS = 20;

export class NotificationDispatcher {
  private running = false;
  private stopping = false;
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private flushTimer: NodeJS.Timeout | undefined;
  private lastPurge = 0;
  /** Batches being sent, by subscription queue. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();
  private completed: Outcome[] = [];
  private released: number[] = [];
  private readonly client: WebhookClient;
  /** Lease owner tag of this instance (several instances may dispatch from one database). */
  private readonly leaseOwner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly leaseMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly options: DispatcherOptions,
  ) {
    // Every request in flight listens on the one shutdown signal.
    setMaxListeners(0, this.controller.signal);
    this.client = new WebhookClient({ timeoutMs: options.timeoutMs, allowInternal: options.allowInternal, maxSockets: options.concurrency });
    // Outlives several attempts; a batch stops early rather than outlive its lease.
    this.leaseMs = options.timeoutMs * 3 + 10_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.kick();
  }

  /** Look for work now (after a commit that wrote notifications, after a batch). */
  readonly kick = (): void => {
    if (!this.running || this.stopping) return;
    void this.pump();
  };

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    let pause = this.options.pollMs;
    try {
      do {
        this.again = false;
        await this.flush();
        const free = this.options.concurrency - this.inFlight.size;
        if (this.stopping || free <= 0) break;
        const batches = await claimBatches(this.pool, free, PER_QUEUE, this.leaseMs, this.leaseOwner);
        if (batches === undefined) {
          // Another instance is claiming right now; try again shortly.
          pause = Math.min(pause, 20);
          break;
        }
        if (this.stopping) {
          this.released.push(...batches.flat().map((c) => c.id));
          break;
        }
        for (const batch of batches) this.send(batch);
        await this.purge();
      } while (this.again && !this.stopping);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'notification dispatch failed; retrying');
      pause = Math.min(pause, 1000);
    } finally {
      this.pumping = false;
    }
    this.wake(pause);
  }

  /** Arms the timer for `ms` from now unless it will already fire sooner. */
  private wake(ms: number): void {
    if (!this.running || this.stopping) return;
    const at = Date.now() + ms;
    if (this.timer && at >= this.wakeAt) return;
    clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeAt = Infinity;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  /** Sends one subscription's batch in order; stops at a failure to be retried. */
  private send(batch: Claimed[]): void {
    const key = `${batch[0]!.organizationId}:${batch[0]!.subscriptionId}`;
    const leaseEnds = Date.now() + this.leaseMs;
    const done = (async () => {
      for (let i = 0; i < batch.length; i += 1) {
        // Never send beyond the lease: another instance may claim the rows after it.
        if (this.stopping || Date.now() + this.options.timeoutMs + 5000 > leaseEnds) {
          this.released.push(...batch.slice(i).map((n) => n.id));
          break;
        }
        const n = batch[i]!;
        const result = await this.post(n);
        if (result.aborted) {
          this.released.push(...batch.slice(i).map((x) => x.id));
          break;
        }
        const outcome = this.outcome(n, result);
        this.completed.push(outcome);
        this.scheduleFlush();
        // A retry later holds back the rest of the queue; delivered or dead, it moves on.
        if (outcome.state === 'pending') {
          this.released.push(...batch.slice(i + 1).map((x) => x.id));
          break;
        }
      }
    })()
      .catch((err: unknown) => this.log.error({ err }, 'notification batch failed'))
      .finally(() => {
        this.inFlight.delete(key);
        this.kick();
      });
    this.inFlight.set(key, done);
  }

  private post(n: Claimed): Promise<DeliveryResult> {
    const body = webhookBody(n);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'flex-vtn-notifier/1',
      'x-notification-id': n.notificationId,
      'x-notification-attempt': String(n.attempts + 1),
    };
    if (n.bearerToken) headers.authorization = `Bearer ${n.bearerToken}`;
    return this.client.post(n.callbackUrl, body, headers, this.controller.signal).catch((err: unknown) => ({ delivered: false, retryable: true, error: (err as Error).message }));
  }

  private outcome(n: Claimed, result: DeliveryResult): Outcome {
    if (result.delivered) return { id: n.id, state: 'delivered', status: result.status ?? null, error: null, delayMs: null };
    const attempts = n.attempts + 1;
    const error = (result.error ?? 'failed').slice(0, 500);
    if (!result.retryable || attempts >= this.options.maxAttempts) {
      // The URL's host only: a query string may carry the receiver's secrets.
      this.log.warn({ notificationId: n.notificationId, host: hostOf(n.callbackUrl), attempts, error }, 'notification dead-lettered');
      return { id: n.id, state: 'dead', status: result.status ?? null, error, delayMs: null };
    }
    const delay = Math.min(this.options.backoff.capMs, Math.max(backoffDelay(attempts - 1, this.options.backoff), result.retryAfterMs ?? 0));
    this.wake(delay);
    return { id: n.id, state: 'pending', status: result.status ?? null, error, delayMs: delay };
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush().catch((err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'could not record notification outcomes; retrying');
        this.scheduleFlush();
      });
    }, FLUSH_DELAY_MS);
  }

  /** Writes outcomes, then gives back the leases of what was not attempted. */
  private async flush(): Promise<void> {
    const outcomes = this.completed;
    const released = this.released;
    if (outcomes.length === 0 && released.length === 0) return;
    this.completed = [];
    this.released = [];
    try {
      await recordOutcomes(this.pool, outcomes);
    } catch (err) {
      this.completed.unshift(...outcomes);
      this.released.unshift(...released);
      throw err;
    }
    try {
      await releaseLeases(this.pool, released, this.leaseOwner);
    } catch (err) {
      this.released.unshift(...released);
      throw err;
    }
  }

  private async purge(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await purgeDelivered(this.pool, KEEP_DELIVERED_DAYS);
  }

  /** Stops claiming; lets batches in flight finish their current attempt (briefly), cuts the
   * rest short and gives their rows back; records every outcome. Call before the pool closes. */
  async stop(): Promise<void> {
    if (!this.running || this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    // A claim under way finishes first, so no batch starts after this point.
    while (this.pumping) await new Promise((resolve) => setTimeout(resolve, 5));
    const settled = () => Promise.allSettled([...this.inFlight.values()]);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([settled(), new Promise((resolve) => (grace = setTimeout(resolve, Math.min(STOP_GRACE_MS, this.options.timeoutMs))))]);
    clearTimeout(grace);
    this.controller.abort();
    await settled();
    clearTimeout(this.flushTimer);
    try {
      await this.flush();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not record the last notification outcomes; their leases will expire');
    }
    this.client.close();
    this.running = false;
  }
}

/** A 3.1 notification (with the notificationID extension, as 3.0.1 bodies have it). */
/** What is sent for a notification (and what the admin view shows): the body is assembled from
 * stored JSON text (objectType/operation are closed enums); subscriptions written through the
 * 3.1.0 surface get 3.1 bodies (v31/representation.ts). */
export type BodySource = Pick<Claimed, 'notificationId' | 'objectType' | 'operation' | 'object' | 'targets' | 'openadrVersion' | 'ext' | 'clientId'>;

export function webhookBody(n: BodySource): string {
  if (n.openadrVersion === '3.1.0') return webhookBody31(n);
  return `{"notificationID":"${n.notificationId}","objectType":"${n.objectType}","operation":"${n.operation}","object":${n.object},"targets":${n.targets ?? 'null'}}`;
}

function webhookBody31(n: BodySource): string {
  const object = to31(n.objectType, JSON.parse(n.object) as Record<string, unknown>, { ext: n.ext, clientID: n.objectType === 'VEN' ? undefined : n.clientId });
  return JSON.stringify({ notificationID: n.notificationId, ...notification31(n.objectType, n.operation, object) });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid)';
  }
}
