// A cache of VTN read responses (JSON text), because a PostgreSQL round trip per poll cannot
// serve a VEN fleet at the rates wanted on a small machine: on the 2-core benchmark VM one
// `GET /events?programID&limit=50` from the database costs ~0.25 ms of Node CPU (mostly the
// kernel side of the socket writes) and ~0.3–0.5 ms of PostgreSQL CPU, i.e. about 2,000 req/s;
// served from here it is a map lookup (bench/vtnLoad.ts, docs/benchmarks.md).
//
// Correctness comes from versions, not from expiry. Each (organization, object group) has a
// version; an entry is valid only while the versions it was read under are unchanged. A write
// bumps its group's version locally right after its commit (read-your-writes on this instance)
// and sends `NOTIFY vtn_changes '<org>:<group>'` inside its transaction, which PostgreSQL
// delivers to every instance at commit. Versions are captured *before* the database read, so a
// read racing a write is stored under the old version and never served. While the LISTEN
// connection is down nothing is cached; after it reconnects everything cached before is
// dropped. Entries also expire after `ttlMs`, a bound on staleness should a notification be
// lost without the connection reporting it.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Pool, Queryable } from '../store/database.ts';
import { backoffDelay } from '../store/retry.ts';
import type { ObjectKind } from './schemas.ts';

/** Invalidation groups: a resource change changes its VEN's served document too. */
export type CacheGroup = 'PROGRAM' | 'EVENT' | 'REPORT' | 'SUBSCRIPTION' | 'VEN';
export const GROUP_OF: Record<ObjectKind, CacheGroup> = { PROGRAM: 'PROGRAM', EVENT: 'EVENT', REPORT: 'REPORT', SUBSCRIPTION: 'SUBSCRIPTION', VEN: 'VEN', RESOURCE: 'VEN' };

const CHANNEL = 'vtn_changes';
const MAX_ENTRIES = 20_000;
const MAX_BYTES = 64 * 1024 * 1024;

interface Entry {
  stamp: string;
  /** The response bytes: encoded once, not on every hit (34 KB for 50 events). */
  body: Buffer;
  expires: number;
}

export interface ReadCacheOptions {
  /** 0 disables the cache. */
  ttlMs: number;
}

export class ReadCache {
  private readonly versions = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();
  private readonly filling = new Map<string, Promise<Buffer | undefined>>();
  private bytes = 0;
  /** The LISTEN connection is up: entries may be stored and served. */
  private live = false;
  private stopped = false;
  private listener: pg.Client | undefined;
  private reconnects = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly options: ReadCacheOptions,
  ) {}

  get enabled(): boolean {
    return this.options.ttlMs > 0;
  }

  async start(): Promise<void> {
    if (this.enabled) await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    clearTimeout(this.reconnectTimer);
    await this.listener?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.pool.options.connectionString, keepAlive: true });
    client.on('notification', (message) => {
      const [org, group] = (message.payload ?? '').split(':');
      if (org && group) this.bump(Number(org), group as CacheGroup);
    });
    let down = false;
    const onLost = (err?: Error) => {
      if (down) return;
      down = true;
      this.lost(client, err);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      onLost(err as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.clear();
    this.reconnects = 0;
    this.live = true;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.listener === client) this.listener = undefined;
    this.live = false;
    this.clear();
    client.end().catch(() => undefined);
    if (this.stopped) return;
    const delay = backoffDelay(this.reconnects++, { baseMs: 200, capMs: 5000 }) + 100;
    this.log.warn({ err: err?.message, retryInMs: delay }, 'VTN read cache: change feed lost; caching is off until it reconnects');
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** A write committed (here or, through NOTIFY, elsewhere): entries read before are stale. */
  bump(organizationId: number, group: CacheGroup): void {
    const key = `${organizationId}:${group}`;
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
  }

  /** Inside the writing transaction: tells every instance at commit. */
  async announce(tx: Queryable, organizationId: number, groups: Iterable<CacheGroup>): Promise<void> {
    if (!this.enabled) return;
    const payloads = [...new Set(groups)].map((g) => `${organizationId}:${g}`);
    await tx.query({ name: 'vtn_announce', text: `SELECT pg_notify('${CHANNEL}', p) FROM unnest($1::text[]) AS p`, values: [payloads] });
  }

  private stamp(organizationId: number, groups: readonly CacheGroup[]): string {
    let stamp = '';
    for (const g of groups) stamp += `${this.versions.get(`${organizationId}:${g}`) ?? 0}.`;
    return stamp;
  }

  /** The response for `key`: cached, or `read()`'s result (stored when the versions held).
   * Concurrent misses of one key share one read. Undefined results (404) are not cached. */
  async get(organizationId: number, groups: readonly CacheGroup[], key: string, read: () => Promise<string | undefined>): Promise<string | Buffer | undefined> {
    if (!this.live) return read();
    const stamp = this.stamp(organizationId, groups);
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.stamp === stamp && hit.expires > now) return hit.body;
    const fillKey = `${stamp}|${key}`;
    let pending = this.filling.get(fillKey);
    if (!pending) {
      pending = read()
        .then((text) => (text === undefined ? undefined : Buffer.from(text)))
        .finally(() => this.filling.delete(fillKey));
      this.filling.set(fillKey, pending);
      void pending.then((body) => this.store(key, stamp, body, now), () => undefined);
    }
    return pending;
  }

  /** The cached response for `key` if it is valid now, without reading (for synchronous callers). */
  peek(organizationId: number, groups: readonly CacheGroup[], key: string): Buffer | undefined {
    if (!this.live) return undefined;
    const hit = this.entries.get(key);
    return hit && hit.stamp === this.stamp(organizationId, groups) && hit.expires > Date.now() ? hit.body : undefined;
  }

  private store(key: string, stamp: string, body: Buffer | undefined, readAt: number): void {
    if (body === undefined || !this.live) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.body.length;
      this.entries.delete(key);
    }
    // Oldest first (insertion order) when full.
    while (this.entries.size >= MAX_ENTRIES || (this.bytes + body.length > MAX_BYTES && this.entries.size > 0)) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldestKey);
      this.bytes -= oldest.body.length;
    }
    this.entries.set(key, { stamp, body, expires: readAt + this.options.ttlMs });
    this.bytes += body.length;
  }
}
