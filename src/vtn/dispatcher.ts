// Delivers outbox notifications to subscription callbacks. Claims due queue heads (at most one
// in flight per subscription: per-subscription order), posts them concurrently (up to
// `concurrency`), and records each outcome: delivered; retried after a capped exponential
// backoff with full jitter (src/store/retry.ts, honouring a longer Retry-After); or dead after
// `maxAttempts` or a permanent refusal (then visible and retryable in the admin API).
//
// It wakes up when this instance commits notifications (kick), when a retry falls due, and
// every `pollMs` for rows written by other instances. Delivery is at least once: a receiver may
// see a notification again (after a timeout, a crash, a lost answer) and de-duplicates on
// `notificationID` / the X-Notification-Id header.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Pool } from '../store/database.ts';
import { backoffDelay, type BackoffPolicy } from '../store/retry.ts';
import { claimNotifications, purgeDelivered, recordOutcomes, releaseLeases, type Claimed, type Outcome } from './deliveryQueue.ts';
import { WebhookClient, type DeliveryResult } from './webhookClient.ts';

export interface DispatcherOptions {
  concurrency: number;
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffPolicy;
  pollMs: number;
  allowInternal: boolean;
}

const PURGE_EVERY_MS = 10 * 60_000;
const KEEP_DELIVERED_DAYS = 7;
/** How long stop() lets deliveries in flight finish before cutting them short. */
const STOP_GRACE_MS = 5000;

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

export class NotificationDispatcher {
  private running = false;
  private stopping = false;
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private lastPurge = 0;
  private readonly inFlight = new Map<number, InFlight>();
  private completed: Outcome[] = [];
  private readonly unfinished: number[] = [];
  private readonly client: WebhookClient;
  /** Lease owner tag of this instance (several instances may dispatch from one database). */
  private readonly leaseOwner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly leaseMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly options: DispatcherOptions,
  ) {
    this.client = new WebhookClient({ timeoutMs: options.timeoutMs, allowInternal: options.allowInternal, maxSockets: options.concurrency });
    // Longer than any attempt can take, so a live instance never loses a lease mid-delivery.
    this.leaseMs = options.timeoutMs * 2 + 10_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.kick();
  }

  /** Look for work now (after a commit that wrote notifications, after a delivery). */
  readonly kick = (): void => {
    if (!this.running || this.stopping) return;
    void this.pump();
  };

  get activeDeliveries(): number {
    return this.inFlight.size;
  }

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
        const claimed = await claimNotifications(this.pool, free, this.leaseMs, this.leaseOwner);
        if (this.stopping) {
          this.unfinished.push(...claimed.map((c) => c.id));
          break;
        }
        for (const notification of claimed) this.deliver(notification);
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

  private deliver(n: Claimed): void {
    const controller = new AbortController();
    // The body is assembled from stored JSON text; objectType/operation are closed enums.
    const body = `{"notificationID":"${n.notificationId}","objectType":"${n.objectType}","operation":"${n.operation}","object":${n.object},"targets":${n.targets ?? 'null'}}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'flex-vtn-notifier/1',
      'x-notification-id': n.notificationId,
      'x-notification-attempt': String(n.attempts + 1),
    };
    if (n.bearerToken) headers.authorization = `Bearer ${n.bearerToken}`;
    const done = this.client
      .post(n.callbackUrl, body, headers, controller.signal)
      .then((result) => {
        if (result.aborted) this.unfinished.push(n.id);
        else this.completed.push(this.outcome(n, result));
      })
      .catch((err: unknown) => void this.completed.push(this.outcome(n, { delivered: false, retryable: true, error: (err as Error).message })))
      .finally(() => {
        this.inFlight.delete(n.id);
        this.kick();
      });
    this.inFlight.set(n.id, { controller, done });
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

  private async flush(): Promise<void> {
    if (this.completed.length === 0) return;
    const batch = this.completed;
    this.completed = [];
    try {
      await recordOutcomes(this.pool, batch);
    } catch (err) {
      this.completed.unshift(...batch);
      throw err;
    }
  }

  private async purge(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await purgeDelivered(this.pool, KEEP_DELIVERED_DAYS);
  }

  /** Stops claiming; lets deliveries in flight finish (briefly), cuts the rest short and gives
   * their rows back; records every outcome. Call before the pool closes. */
  async stop(): Promise<void> {
    if (!this.running || this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    // A claim under way finishes first, so no delivery starts after this point.
    while (this.pumping) await new Promise((resolve) => setTimeout(resolve, 5));
    const settled = () => Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([settled(), new Promise((resolve) => (grace = setTimeout(resolve, Math.min(STOP_GRACE_MS, this.options.timeoutMs))))]);
    clearTimeout(grace);
    for (const flight of this.inFlight.values()) flight.controller.abort();
    await settled();
    try {
      await this.flush();
      await releaseLeases(this.pool, this.unfinished, this.leaseOwner);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not record the last notification outcomes; their leases will expire');
    }
    this.client.close();
    this.running = false;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid)';
  }
}
