// QuestDB used directly, as the peer of the meter-data benchmarks in QuestDB mode: the same points
// Flex stores, sent as InfluxDB line protocol over HTTP (/write) in bodies posted in parallel and
// timed until QuestDB has applied them (its WAL applies commits asynchronously, so a 204 alone
// does not mean readable), and the same bucket questions asked with SAMPLE BY over HTTP (/exec).
//
// The server is not started here: QUESTDB_HTTP_URL names a running one (no auth, loopback). The
// table name is the caller's (several benchmarks and helpers may share one server); its schema is
// the one Flex's QuestDB store uses, so both sides pay for the same columns, partitioning and
// DEDUP UPSERT KEYS.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { mapConcurrent, timedRequest } from './measure.ts';
import { STEP_SECONDS, valueOf } from './readingsData.ts';

export interface QuestDbAnswer {
  ms: number;
  bytes: number;
  /** Rows of the answer's dataset. */
  rows: number;
}

export interface QuestDbIngest {
  /** First byte sent → last body acknowledged (204). */
  ackMs: number;
  /** First byte sent → every row readable (the table's WAL applied up to the last commit). */
  visibleMs: number;
}

export interface QuestDbPeer {
  httpUrl: string;
  table: string;
  /** e.g. "QuestDB 7.4.2" (from build()). */
  version: string;
  /** CREATE TABLE IF NOT EXISTS with Flex's readings schema. */
  createTable(): Promise<void>;
  dropTable(): Promise<void>;
  /** Posts the ILP bodies with `concurrency` in flight and waits until all is applied. */
  ingest(bodies: readonly Buffer[], concurrency: number): Promise<QuestDbIngest>;
  /** Waits until the table's WAL is applied up to the sequencer's last transaction; ms waited. */
  waitApplied(timeoutMs?: number): Promise<number>;
  /** One SQL statement over HTTP /exec, timed. */
  exec(sql: string): Promise<QuestDbAnswer>;
  /** Hourly averages of one register over [start, end) (SAMPLE BY 1h). */
  hourlyAverages(registerIds: readonly (number | string)[], start: number, end: number): Promise<QuestDbAnswer>;
  /** Daily sums by local day of `timeZone` (SAMPLE BY 1d ALIGN TO CALENDAR TIME ZONE). */
  dailySums(registerIds: readonly (number | string)[], start: number, end: number, timeZone: string): Promise<QuestDbAnswer>;
}

/** The peer's table, as Flex's QuestDB store declares `readings`. */
export function createTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  register_id SYMBOL CAPACITY 100000 INDEX, value DOUBLE, resolution INT, updated_at TIMESTAMP, ts TIMESTAMP
) TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, register_id)`;
}

const iso = (ms: number) => new Date(ms).toISOString();
const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
const inList = (ids: readonly (number | string)[]) => ids.map((id) => sqlText(String(id))).join(', ');

/** The same points as readingsBody/copyBinary (register r = registerIds[r], reading i at
 * startMs + i × 15 min, value valueOf(r, i)) as ILP lines, split into `parts` bodies of whole
 * registers:  <table>,register_id=<id> value=<v>,resolution=900i,updated_at=<µs>t <ns> */
export function ilpBodies(table: string, registerIds: readonly (number | string)[], startMs: number, count: number, parts: number, updatedAtMs = Date.now(), value: (r: number, i: number) => number = valueOf): Buffer[] {
  const nanos = Array.from({ length: count }, (_, i) => `${BigInt(startMs + i * STEP_SECONDS * 1000) * 1_000_000n}\n`);
  const tail = `,resolution=${STEP_SECONDS}i,updated_at=${updatedAtMs * 1000}t `;
  const perPart = Math.ceil(registerIds.length / parts);
  const bodies: Buffer[] = [];
  for (let p = 0; p < registerIds.length; p += perPart) {
    const lines: string[] = [];
    for (let r = p; r < Math.min(p + perPart, registerIds.length); r += 1) {
      const prefix = `${table},register_id=${registerIds[r]} value=`;
      for (let i = 0; i < count; i += 1) lines.push(`${prefix}${value(r, i)}${tail}${nanos[i]}`);
    }
    bodies.push(Buffer.from(lines.join('')));
  }
  return bodies;
}

/** The peer on QUESTDB_HTTP_URL (or `httpUrl`), or undefined when none is configured. */
export async function questdbPeer(table: string, httpUrl = process.env.QUESTDB_HTTP_URL): Promise<QuestDbPeer | undefined> {
  if (!httpUrl) return undefined;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new Error(`table name ${table}: letters, digits and _ only`);
  const base = httpUrl.replace(/\/$/, '');

  async function exec(sql: string): Promise<QuestDbAnswer & { body: string }> {
    const r = await timedRequest(`${base}/exec?${new URLSearchParams({ query: sql })}`, 'GET', {}, undefined, true);
    if (r.status !== 200) throw new Error(`QuestDB ${sql.slice(0, 200)}: ${r.status} ${r.body.slice(0, 500)}`);
    const answer = JSON.parse(r.body) as { dataset?: unknown[]; error?: string };
    if (answer.error) throw new Error(`QuestDB ${sql.slice(0, 200)}: ${answer.error}`);
    return { ms: r.ms, bytes: r.bytes, rows: answer.dataset?.length ?? 0, body: r.body };
  }

  async function waitApplied(timeoutMs = 120_000): Promise<number> {
    const t0 = performance.now();
    while (true) {
      const r = await exec(`SELECT writerTxn, sequencerTxn FROM wal_tables() WHERE name = ${sqlText(table)}`);
      const row = (JSON.parse(r.body) as { dataset: [number, number][] }).dataset[0];
      if (!row) throw new Error(`QuestDB table ${table} is not a WAL table`);
      if (row[0] >= row[1]) return performance.now() - t0;
      if (performance.now() - t0 > timeoutMs) throw new Error(`QuestDB table ${table}: WAL not applied after ${timeoutMs} ms (writer ${row[0]}, sequencer ${row[1]})`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** One ILP/HTTP request on `agent`; resolves on its 204. */
  function post(agent: http.Agent, body: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${base}/write`, { method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': String(body.length) } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`QuestDB /write: ${res.statusCode} ${text.slice(0, 500)}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const build = await exec('SELECT build()');
  const version = /QuestDB [0-9][^,\s"]*/.exec(build.body)?.[0] ?? 'QuestDB';
  return {
    httpUrl: base,
    table,
    version,
    async createTable() {
      await exec(createTableSql(table));
    },
    async dropTable() {
      await exec(`DROP TABLE IF EXISTS ${table}`);
    },
    async ingest(bodies, concurrency) {
      // Fresh connections for each load (QuestDB closes idle keep-alive connections; reusing one
      // it closed fails with EPIPE), opened before the clock starts.
      const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
      await mapConcurrent(Array.from({ length: concurrency }), concurrency, () => post(agent, Buffer.alloc(0)));
      const t0 = performance.now();
      await mapConcurrent(bodies, concurrency, (body) => post(agent, body));
      const ackMs = performance.now() - t0;
      agent.destroy();
      await waitApplied();
      return { ackMs, visibleMs: performance.now() - t0 };
    },
    waitApplied,
    exec,
    hourlyAverages(registerIds, start, end) {
      return exec(
        `SELECT register_id, ts, avg(value) AS mean FROM ${table} WHERE register_id IN (${inList(registerIds)}) AND ts >= '${iso(start)}' AND ts < '${iso(end)}' SAMPLE BY 1h ALIGN TO CALENDAR ORDER BY register_id, ts`,
      );
    },
    dailySums(registerIds, start, end, timeZone) {
      return exec(
        `SELECT register_id, ts, sum(value) AS total FROM ${table} WHERE register_id IN (${inList(registerIds)}) AND ts >= '${iso(start)}' AND ts < '${iso(end)}' SAMPLE BY 1d ALIGN TO CALENDAR TIME ZONE ${sqlText(timeZone)} ORDER BY register_id, ts`,
      );
    },
  };
}
