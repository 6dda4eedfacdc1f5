// Publishes the MQTT outbox (vtn_mqtt_messages, written with every change: mqttTopics.ts) to the
// broker: the embedded one, or an external one (MQTT_URL). Rows go out in id order, QoS 1: a
// batch is claimed under a transaction-scoped advisory lock (one publisher at a time per
// database, so each topic sees its messages in commit order), published, and marked published
// once the broker acknowledged every message of it. If the broker is down or does not
// acknowledge in time, the transaction rolls back: the rows stay pending and go out, in the same
// order, when the broker is back (at least once: a subscriber may see a message twice after such
// a failure). An outage is logged twice: a warning when publishing first fails, and, when a
// batch can be sent again, how long it lasted and how many notifications waited; the retries in
// between log at debug level. The external broker's connection is retried with backoff.
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { Pool } from '../store/database.ts';
import { notification31, to31 } from './v31/representation.ts';

export interface MqttSink {
  publish(messages: readonly { topic: string; payload: string | Buffer }[]): Promise<void>;
  /** Whether publishing can succeed now (connected). */
  readonly ready: boolean;
  /** Why the broker was last unreachable, if it was (for the outage's log line). */
  readonly lastError?: string;
  close(): Promise<void>;
}

/** Arbitrary but fixed (deliveryQueue.ts uses 727_274_002). */
const PUBLISH_LOCK = 727_274_003;
const BATCH = 50;
const ACK_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;
const PURGE_EVERY_MS = 10 * 60_000;
const KEEP_PUBLISHED_DAYS = 7;

interface Row {
  id: string;
  object_type: string;
  operation: string;
  object: string;
  ext: Record<string, unknown> | null;
  client_id: string | null;
  topics: string[];
}

/** The 3.1 notification a row is published as. */
export function payloadOf(row: Row): string {
  const doc = JSON.parse(row.object) as Record<string, unknown>;
  const object = to31(row.object_type, doc, { ext: row.ext, clientID: row.object_type === 'VEN' ? undefined : row.client_id });
  return JSON.stringify(notification31(row.object_type, row.operation, object));
}

export class MqttPublisher {
  private running = false;
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private lastPurge = 0;
  private stopped: Promise<void> | undefined;
  /** Since when publishing has been failing (undefined: it is not). */
  private downSince: number | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly sink: MqttSink,
    private readonly log: Logger,
    private readonly pollMs: number,
  ) {}

  start(): void {
    this.running = true;
    this.kick();
  }

  readonly kick = (): void => {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  };

  private async pump(): Promise<void> {
    this.pumping = true;
    let next = this.pollMs;
    try {
      if (this.downSince !== undefined && this.sink.ready) await this.back();
      do {
        this.again = false;
        const sent = await this.publishBatch();
        if (sent === BATCH) this.again = true;
      } while (this.again && this.running);
      await this.purge();
    } catch (err) {
      const reason = (err as Error).message;
      const connecting = !this.sink.ready && this.sink.lastError === undefined;
      if (this.downSince === undefined && !connecting) {
        this.downSince = Date.now();
        this.log.warn({ err: reason, broker: this.sink.lastError }, 'MQTT broker unavailable: notifications wait in the outbox until it is back');
      } else this.log.debug({ err: reason, broker: this.sink.lastError }, 'MQTT notifications still not published');
      next = Math.min(next, RETRY_MS);
    } finally {
      this.pumping = false;
    }
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(this.kick, next);
    this.timer.unref();
  }

  /** The end of an outage: said once, with what waited. */
  private async back(): Promise<void> {
    const { rows } = await this.pool.query<{ pending: number }>("SELECT count(*)::int AS pending FROM vtn_mqtt_messages WHERE state = 'pending'");
    this.log.info({ pending: rows[0]!.pending, downMs: Date.now() - this.downSince! }, 'MQTT broker back: publishing the notifications that waited');
    this.downSince = undefined;
  }

  /** One batch in one transaction; returns how many rows it published (0: none or locked). */
  private async publishBatch(): Promise<number> {
    if (!this.sink.ready) throw new Error('MQTT broker not connected');
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: lock } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [PUBLISH_LOCK]);
      if (!lock[0]!.locked) {
        await client.query('ROLLBACK');
        return 0;
      }
      const { rows } = await client.query<Row>({
        name: 'vtn_mqtt_claim',
        text: `SELECT id, object_type, operation, object::text AS object, ext, client_id, topics FROM vtn_mqtt_messages
               WHERE state = 'pending' ORDER BY id LIMIT $1 FOR UPDATE`,
        values: [BATCH],
      });
      if (rows.length === 0) {
        await client.query('ROLLBACK');
        return 0;
      }
      const messages = rows.flatMap((row) => {
        const payload = Buffer.from(payloadOf(row));
        return row.topics.map((topic) => ({ topic, payload }));
      });
      try {
        await withTimeout(this.sink.publish(messages), ACK_TIMEOUT_MS);
      } catch (err) {
        await client.query('ROLLBACK');
        await this.pool.query("UPDATE vtn_mqtt_messages SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::bigint[]) AND state = 'pending'", [
          rows.map((r) => r.id),
          (err as Error).message.slice(0, 500),
        ]);
        throw err;
      }
      await client.query("UPDATE vtn_mqtt_messages SET state = 'published', attempts = attempts + 1, published_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])", [
        rows.map((r) => r.id),
      ]);
      await client.query('COMMIT');
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async purge(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await this.pool.query("DELETE FROM vtn_mqtt_messages WHERE state = 'published' AND published_at < now() - $1 * interval '1 day'", [KEEP_PUBLISHED_DAYS]);
  }

  /** Stops after the batch under way (its outcome is recorded). */
  stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.running = false;
      clearTimeout(this.timer);
      while (this.pumping) await new Promise((resolve) => setTimeout(resolve, 5));
    })());
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no acknowledgement from the MQTT broker within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

/** Reconnection to an external broker: after 1 s, doubling up to 30 s, back to 1 s once connected. */
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30_000;

/** An external broker (MQTT_URL, credentials in the URL): one connection, reconnecting with
 * backoff; `onConnect` wakes the publisher when it is back. Connection errors are logged at debug
 * level: the publisher logs the outage once, with the last of them. */
export function externalSink(url: string, log: Logger, onConnect: () => void, backoff = { minMs: RECONNECT_MIN_MS, maxMs: RECONNECT_MAX_MS }): MqttSink {
  const client: MqttClient = mqtt.connect(url, {
    clientId: `flex-vtn-${randomBytes(6).toString('hex')}`,
    reconnectPeriod: backoff.minMs,
    connectTimeout: 5000,
    clean: true,
    // Never queue while disconnected: unpublished rows wait in the outbox instead.
    queueQoSZero: false,
  });
  const broker = new URL(url).host;
  let lastError: string | undefined;
  let connectedOnce = false;
  // mqtt.js reads reconnectPeriod each time it schedules the next attempt.
  client.on('reconnect', () => {
    client.options.reconnectPeriod = Math.min(backoff.maxMs, (client.options.reconnectPeriod ?? backoff.minMs) * 2);
  });
  client.on('connect', () => {
    client.options.reconnectPeriod = backoff.minMs;
    lastError = undefined;
    if (!connectedOnce) log.info({ broker }, 'connected to the MQTT broker');
    else log.debug({ broker }, 'reconnected to the MQTT broker');
    connectedOnce = true;
    onConnect();
  });
  client.on('close', () => (lastError ??= 'connection closed'));
  client.on('error', (err) => {
    lastError = err.message;
    log.debug({ err: err.message, broker }, 'MQTT broker connection error');
  });
  return {
    get ready() {
      return client.connected;
    },
    get lastError() {
      return lastError;
    },
    publish: async (messages) => {
      if (!client.connected) throw new Error('MQTT broker not connected');
      await Promise.all(messages.map((m) => client.publishAsync(m.topic, m.payload, { qos: 1 })));
    },
    close: () => client.endAsync(true).then(() => undefined),
  };
}
