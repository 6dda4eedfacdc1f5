// The export in remote mode: GET /api/readings register by register, in time windows, written as
// the same CSV the database export writes (exportReadings.ts). Windows of readings as stored start
// at PAGE_ROWS readings of 15 minutes and are halved while the server answers that the window
// holds more than READINGS_MAX_POINTS; bucketed windows end on bucket boundaries (a whole period
// for day buckets, which follow each register's local days), so no bucket is split.
import { EXPORT_HEADER, PAGE_ROWS } from './exportReadings.ts';
import { RemoteError, type RemoteApi } from './remote.ts';

export interface RemoteExportQuery {
  organizationId: number;
  registerIds: readonly number[];
  start: number;
  end: number;
  resolution: number;
  /** UTC ms: `asOf` of every request (undefined: none, each page as of when it is read). */
  asOf?: number;
}

interface ApiReading {
  timestamp: string;
  periodTo: string;
  updatedAt: string;
  value: number | null;
  resolution: number;
}

const DAY_MS = 86_400_000;
const MIN_WINDOW_MS = 60_000;

function windowEnd(from: number, q: RemoteExportQuery, windowMs: number): number {
  if (q.resolution === 0) return Math.min(q.end, from + windowMs);
  const bucket = q.resolution * 1000;
  if (bucket % DAY_MS === 0) return q.end;
  const to = Math.floor((from + windowMs) / bucket) * bucket;
  return Math.min(q.end, to > from ? to : from + bucket);
}

export async function* remotePages(api: RemoteApi, q: RemoteExportQuery, pageRows = PAGE_ROWS): AsyncGenerator<string> {
  yield EXPORT_HEADER;
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const id of q.registerIds) {
    let windowMs = pageRows * (q.resolution || 900) * 1000;
    for (let from = q.start; from < q.end; ) {
      const to = windowEnd(from, q, windowMs);
      const params = new URLSearchParams({ organizationId: String(q.organizationId), registerId: String(id), start: iso(from), end: iso(to), resolution: String(q.resolution) });
      if (q.asOf !== undefined) params.set('asOf', iso(q.asOf));
      let answer: { registerId: number; readings: ApiReading[] }[];
      try {
        answer = await api.getJson(`/api/readings?${params}`);
      } catch (err) {
        // Too many readings in the window: halve it (as stored) and ask again.
        if (err instanceof RemoteError && err.status === 400 && /more than \d+ readings/.test(err.message) && q.resolution === 0 && windowMs > MIN_WINDOW_MS) {
          windowMs = Math.max(MIN_WINDOW_MS, windowMs / 2);
          continue;
        }
        throw err;
      }
      let text = '';
      for (const r of answer[0]?.readings ?? []) text += `${id},${r.timestamp},${r.periodTo},${r.updatedAt},${r.value},${r.resolution}\n`;
      if (text) yield text;
      from = to;
    }
  }
}

interface AdminRow {
  id: number;
  externalId: string;
  meterId?: number;
  isVirtual?: boolean;
}

/** Every row of an admin list, page by page (X-Total-Count says when to stop). */
async function adminList(api: RemoteApi, path: string): Promise<AdminRow[]> {
  const rows: AdminRow[] = [];
  for (let offset = 0; ; ) {
    const res = await api.request('GET', `${path}?limit=10000&offset=${offset}`);
    const page = JSON.parse(res.text) as AdminRow[];
    rows.push(...page);
    offset += page.length;
    const total = Number(res.headers.get('x-total-count') ?? offset);
    if (page.length === 0 || offset >= total) return rows;
  }
}

/** Register ids of `METER/REGISTER` externalId pairs through the admin API (global administrator
 * tokens only: organization clients name registers by numeric id in remote mode). */
export async function resolveRemoteRegisters(api: RemoteApi, pairs: readonly { meter: string; register: string }[]): Promise<number[] | string> {
  if (pairs.length === 0) return [];
  let meters: AdminRow[];
  let registers: AdminRow[];
  try {
    [meters, registers] = await Promise.all([adminList(api, '/api/admin/meters'), adminList(api, '/api/admin/registers')]);
  } catch (err) {
    if (err instanceof RemoteError && (err.status === 401 || err.status === 403)) {
      return 'naming registers by externalId in remote mode needs a global administrator token (GET /api/admin/meters, /registers); with an organization client use numeric register ids';
    }
    throw err;
  }
  const meterIds = new Map<string, number>();
  for (const m of meters) meterIds.set(m.externalId, m.id);
  const ids: number[] = [];
  const problems: string[] = [];
  for (const { meter, register } of pairs) {
    const meterId = meterIds.get(meter) ?? (/^\d+$/.test(meter) ? meters.find((m) => m.id === Number(meter))?.id : undefined);
    if (meterId === undefined) {
      problems.push(`unknown meter ${JSON.stringify(meter)}`);
      continue;
    }
    const onMeter = registers.filter((r) => r.meterId === meterId);
    const found = onMeter.find((r) => r.externalId === register) ?? (/^\d+$/.test(register) ? onMeter.find((r) => r.id === Number(register)) : undefined);
    if (!found) problems.push(`unknown register ${JSON.stringify(register)} on meter ${JSON.stringify(meter)}`);
    else if (found.isVirtual) problems.push(`register ${JSON.stringify(`${meter}/${register}`)} is virtual: its readings are computed on read and are not exported`);
    else ids.push(found.id);
  }
  return problems.length > 0 ? problems.join('; ') : ids;
}
