// GET /api/readings and GET /api/readings/average/hourly: check the registers and the caller's
// access, bound the response size, then ask the time-series store (stored registers) or the
// virtual engine (virtual ones) and assemble `[{registerId, readings[]}]` in the order asked.
import { SUMMED_MEASUREMENTS, type MeasurementType } from '../codes.ts';
import { HttpError, badRequest } from '../http/errors.ts';
import type { ApiReply, Principal } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import { releaseJson } from '../store/timeseries/readingJson.ts';
import { TooManyPoints, ValueOutOfRange, type ReadingVersion, type TimeSeriesStore } from '../store/timeseries/types.ts';
import { registersForRead, registersForReadBy, type RegisterForRead } from './meterStore.ts';
import type { ReadWindow, VirtualEngine } from './virtualEngine.ts';

export interface ReadingsQuery extends ReadWindow {
  organizationId: number | undefined;
  registerIds: number[];
}

export interface QueryDeps {
  db: Queryable;
  store: TimeSeriesStore;
  virtual: VirtualEngine;
  maxPoints: number;
}

const OPEN = Buffer.from('[');
const EMPTY = Buffer.from('[]');
const CLOSE = Buffer.from('}');
const END = Buffer.from(']');

export function aggregateOf(register: { measurementType: number }): 'sum' | 'avg' {
  return SUMMED_MEASUREMENTS.has(register.measurementType as MeasurementType) ? 'sum' : 'avg';
}

async function checkedRegisters(deps: QueryDeps, q: ReadingsQuery, principal: Principal): Promise<RegisterForRead[]> {
  const registers = principal.globalAdmin ? await registersForRead(deps.db, q.registerIds) : await registersForReadBy(deps.db, q.registerIds, q.organizationId!);
  // A register of a meter not shared with the organization is refused as one that does not
  // exist: same status, same text, so ids of other organizations' registers cannot be probed.
  const byId = new Map(registers.filter((r) => !('accessible' in r) || r.accessible).map((r) => [r.id, r]));
  const unknown = q.registerIds.flatMap((id, i) =>
    byId.has(id) ? [] : [{ path: `query.registerId[${i}]`, message: principal.globalAdmin ? `register ${id} does not exist` : `unknown register ${id}, or not shared with organization ${q.organizationId}` }],
  );
  if (unknown.length > 0) throw badRequest('Unknown register', unknown);
  return q.registerIds.map((id) => byId.get(id)!);
}

const DAY_SECONDS = 86_400;

/** Why a bucket length is refused, or undefined. Buckets are aligned to the UTC epoch, so only a
 * length that divides a day evenly (1, 60, 300, 900, 3600, 5400, 86400, …) starts a bucket at
 * every midnight, or a whole number of days (each bucket starting at a UTC midnight): 3601 would
 * give buckets at 23:02:59. Shared by GET /api/readings and flex-export. */
export function resolutionError(seconds: number): string | undefined {
  if (seconds <= 0 || DAY_SECONDS % seconds === 0 || seconds % DAY_SECONDS === 0) return undefined;
  return `resolution ${seconds} does not divide a day (86400 s) evenly: use a divisor of 86400 such as 60, 300, 900, 3600 or 86400, or a whole number of days`;
}

function tooMany(maxPoints: number): HttpError {
  return badRequest(`The response would hold more than ${maxPoints} readings; ask for a shorter period, fewer registers or a larger resolution`, [
    { path: 'query', message: `more than ${maxPoints} readings` },
  ]);
}

/** A sum (or average, or virtual value) past the largest double: no JSON number says it. */
function outOfRange(err: ValueOutOfRange): HttpError {
  return new HttpError(
    'unprocessable',
    `The value of register ${err.registerId} for the period from ${new Date(err.timestamp).toISOString()} is beyond ±1.7976931348623157e308, the largest number a reading can carry; ask for a smaller resolution`,
    { errors: [{ path: 'query.resolution', message: `register ${err.registerId}: value beyond ±1.7976931348623157e308` }] },
  );
}

/** Hourly averages (and other forced averages of whole-hour buckets, aligned to the UTC epoch)
 * ask the store nothing that depends on what the register check returns: they are asked at the
 * same time as the check, on another connection, instead of one round trip after it (measured:
 * 1.2–1.7 ms of a register-year's ~20 ms, docs/benchmarks.md). The answer
 * is used only once the check has passed, and only for the registers it found stored; when the
 * check refuses, it is dropped unread. Virtual registers have nothing in the store. */
function averagesBeforeCheck(deps: QueryDeps, q: ReadingsQuery, registerIds: readonly number[]): Promise<Map<number, Buffer>> | undefined {
  if (!q.forceAverage || q.resolution <= 0 || q.resolution % DAY_SECONDS === 0 || registerIds.length === 0) return undefined;
  const answer = deps.store.bucketsJson({ registers: registerIds.map((id) => ({ id, aggregate: 'avg', timeZone: 'UTC' })), start: q.start, end: q.end, resolutionSeconds: q.resolution, asOf: q.asOf });
  // Not awaited when the check refuses: its failure then is nobody's (awaited below otherwise).
  answer.catch(() => undefined);
  return answer;
}

/** The response: `[{"registerId":…,"readings":[…]},…]` as UTF-8 JSON, each register once, in the
 * order asked, as pieces to send in order (never concatenated: the router compresses them one by
 * one, or joins them once when sending them as they are). */
export async function queryReadings(deps: QueryDeps, q: ReadingsQuery, principal: Principal): Promise<Buffer[]> {
  if (q.start >= q.end) throw badRequest('start must be before end', [{ path: 'query.end', message: 'must be after start' }]);
  const badResolution = resolutionError(q.resolution);
  if (badResolution) throw badRequest(badResolution, [{ path: 'query.resolution', message: 'must divide 86400 evenly or be a multiple of it' }]);
  const registerIds = [...new Set(q.registerIds)];
  const tooManyPoints = q.resolution > 0 && Math.ceil((q.end - q.start) / (q.resolution * 1000)) * registerIds.length > deps.maxPoints;
  const early = tooManyPoints ? undefined : averagesBeforeCheck(deps, q, registerIds);
  const registers = await checkedRegisters(deps, { ...q, registerIds }, principal);
  if (tooManyPoints) throw tooMany(deps.maxPoints);
  const stored = registers.filter((r) => !r.isVirtual);
  const virtual = registers.filter((r) => r.isVirtual);
  const json = new Map<number, Buffer>();
  try {
    if (stored.length > 0) {
      const part = early
        ? await early
        : q.resolution === 0
          ? await deps.store.readJson({ registerIds: stored.map((r) => r.id), start: q.start, end: q.end, asOf: q.asOf }, deps.maxPoints)
          : await deps.store.bucketsJson({
              registers: stored.map((r) => ({ id: r.id, aggregate: q.forceAverage ? 'avg' : aggregateOf(r), timeZone: r.timeZone })),
              start: q.start,
              end: q.end,
              resolutionSeconds: q.resolution,
              asOf: q.asOf,
            });
      for (const r of stored) {
        const text = part.get(r.id);
        if (text) json.set(r.id, text);
      }
    }
    for (const register of virtual) json.set(register.id, await deps.virtual.readingsJson(register, q));
  } catch (err) {
    if (err instanceof TooManyPoints) throw tooMany(deps.maxPoints);
    if (err instanceof ValueOutOfRange) throw outOfRange(err);
    throw err;
  }
  const pieces: Buffer[] = [OPEN];
  registers.forEach((r, i) => pieces.push(Buffer.from(`${i === 0 ? '' : ','}{"registerId":${r.id},"readings":`), json.get(r.id) ?? EMPTY, CLOSE));
  pieces.push(END);
  return pieces;
}

/** GET /api/readings/versions: every version of each reading of the registers in [start, end)
 * that has more than one, as `[{registerId, readings: [{timestamp, versions: [...]}]}]`, each
 * register once in the order asked (a virtual register has none: its values are computed). */
export async function queryVersions(deps: QueryDeps, q: ReadingsQuery, principal: Principal): Promise<RegisterVersions[]> {
  if (q.start >= q.end) throw badRequest('start must be before end', [{ path: 'query.end', message: 'must be after start' }]);
  const registerIds = [...new Set(q.registerIds)];
  const registers = await checkedRegisters(deps, { ...q, registerIds }, principal);
  const stored = registers.filter((r) => !r.isVirtual).map((r) => r.id);
  let versions: Map<number, ReadingVersion[]>;
  try {
    versions = stored.length > 0 ? await deps.store.versions({ registerIds: stored, start: q.start, end: q.end }, deps.maxPoints) : new Map();
  } catch (err) {
    if (err instanceof TooManyPoints) throw tooMany(deps.maxPoints);
    throw err;
  }
  return registers.map((r) => {
    const readings: RegisterVersions['readings'] = [];
    for (const v of versions.get(r.id) ?? []) {
      let last = readings[readings.length - 1];
      if (!last || last.timestamp.getTime() !== v.timestamp) readings.push((last = { timestamp: new Date(v.timestamp), versions: [] }));
      last.versions.push({ value: v.value, resolution: v.resolution, recordedAt: new Date(v.recordedAt), supersededAt: v.supersededAt === null ? null : new Date(v.supersededAt) });
    }
    return { registerId: r.id, readings };
  });
}

export interface RegisterVersions {
  registerId: number;
  readings: { timestamp: Date; versions: { value: number; resolution: number; recordedAt: Date; supersededAt: Date | null }[] }[];
}

/** The reply of GET /api/readings: the pieces of queryReadings, whose kept memory (lent by the
 * store's JSON writer, readingJson.ts) is given back once the server has written them. The list
 * is copied: compression takes the pieces out of `raw` as it goes. */
export function readingsReply(pieces: Buffer[]): ApiReply {
  const lent = pieces.slice();
  return { status: 200, raw: pieces, contentType: 'application/json', written: () => releaseJson(lent) };
}
