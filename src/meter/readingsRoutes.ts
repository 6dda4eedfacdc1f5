// The reading endpoints: POST /api/readings (batches up to BODY_LIMIT_BYTES, rate limited per
// OAuth client), GET /api/readings, GET /api/readings/average/hourly.
import { HttpError, badRequest } from '../http/errors.ts';
import { isJsonContentType } from '../http/router.ts';
import { arrayOf, dateTime, int32Id, objectSchema, querySchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, RateLimitWindow, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import type { Queryable } from '../store/database.ts';
import { MAX_ID_LENGTH, MAX_RESOLUTION } from '../shared/readings/parseReadings.ts';
import { FOREVER, type Retention } from '../shared/readings/retention.ts';
import { resolutionLabel, type DomainMetrics, type RefusalReason } from '../domainMetrics.ts';
import { ingestReadings, UnknownSeries } from './ingest.ts';
import { queryReadings, queryVersions, readingsReply, type QueryDeps } from './readingsQuery.ts';
import { registerReadingsSchema } from './schemas.ts';

const externalIdRef = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH } as const;

export interface ReadingsRouteDeps extends QueryDeps {
  db: Queryable;
  store: TimeSeriesStore;
  rateLimit: readonly RateLimitWindow[];
  /** Readings ingested/refused, batch sizes, ingest and query latency (src/domainMetrics.ts). */
  metrics?: DomainMetrics;
  /** How long superseded versions are kept (READING_VERSIONS_RETENTION): `asOf` before it is refused. */
  versionsRetention?: Retention;
}

function refusalReason(err: unknown): RefusalReason {
  if (err instanceof UnknownSeries) return 'unknown_series';
  if (!(err instanceof HttpError)) return 'error';
  if (err.code === 'malformed_json') return 'malformed';
  if (err.code === 'unsupported_content_type') return 'content_type';
  return err.status === 400 ? 'invalid_values' : 'error';
}

/** The published POST /api/readings body. The worker's byte parser (src/shared/readings/parseReadings.ts)
 * is what enforces it; its limits are taken from there, and test/unit/readingsBodyContract.test.ts
 * checks that both accept and refuse the same bodies. */
export const readingsBatchSchema = objectSchema(
  {
    meters: arrayOf(
      objectSchema(
        {
          id: { ...externalIdRef, description: 'The meter’s externalId.' },
          registers: arrayOf(
            objectSchema(
              {
                id: { ...externalIdRef, description: 'The register’s externalId on that meter.' },
                values: arrayOf(
                  objectSchema(
                    {
                      timestamp: { ...utcDateTime, description: 'Start of the interval, ISO 8601 UTC (Z).' },
                      value: { type: 'number' },
                      resolution: { type: 'integer', minimum: 1, maximum: MAX_RESOLUTION, description: 'Seconds the reading covers (at most 366 days).' },
                    },
                    ['timestamp', 'value', 'resolution'],
                  ),
                ),
              },
              ['id', 'values'],
            ),
          ),
        },
        ['id', 'registers'],
      ),
    ),
  },
  ['meters'],
  { title: 'ReadingsBatch' },
);

const rangeProperties = {
  organizationId: int32Id,
  registerId: arrayOf(int32Id, { minItems: 1, maxItems: 1000, description: 'Register ids; repeat the parameter or separate with commas.' }),
  start: { ...utcDateTime, description: 'Inclusive, ISO 8601 UTC.' },
  end: { ...utcDateTime, description: 'Exclusive, ISO 8601 UTC.' },
};

const asOfProperty = {
  asOf: {
    ...utcDateTime,
    description:
      'Answer as recorded at this instant (ISO 8601 UTC; default now): readings recorded later are absent or show the value they had then, and updatedAt is when the value shown was recorded; ' +
      'virtual registers are computed from their sources as of that instant, with today’s definitions. An instant later than now answers as of now; one before the versions kept (READING_VERSIONS_RETENTION) is a 400.',
  },
};

/** One reading's versions (GET /api/readings/versions). */
const readingVersionsSchema = arrayOf(
  objectSchema(
    {
      registerId: { type: 'integer' },
      readings: arrayOf(
        objectSchema(
          {
            timestamp: dateTime,
            versions: arrayOf(
              objectSchema(
                {
                  value: { type: 'number' },
                  resolution: { type: 'integer' },
                  recordedAt: { ...dateTime, description: 'When this value was recorded.' },
                  supersededAt: { type: ['string', 'null'], format: 'date-time', description: 'When the next value was recorded; null for the current value.' },
                },
                ['value', 'resolution', 'recordedAt', 'supersededAt'],
                { title: 'ReadingVersion' },
              ),
            ),
          },
          ['timestamp', 'versions'],
        ),
      ),
    },
    ['registerId', 'readings'],
    { title: 'RegisterReadingVersions' },
  ),
);

type RangeParams = { organizationId: number; registerId: number[]; start: string; end: string; resolution?: number; asOf?: string };

export function readingsRoutes(deps: ReadingsRouteDeps): RouteDef[] {
  const retention = deps.versionsRetention ?? FOREVER;
  /** `asOf` as UTC ms; an instant before the versions kept is refused (their answer is gone). */
  const asOf = (text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const at = parseUtcTimestamp(text)!;
    const limit = retention.cutoff(Date.now());
    if (at < limit)
      throw badRequest(`asOf is before the reading versions kept (READING_VERSIONS_RETENTION ${retention.text}): the earliest answerable instant is now ${new Date(limit).toISOString()}`, [
        { path: 'query.asOf', message: `must not be before ${new Date(limit).toISOString()} (versions are kept for ${retention.text})` },
      ]);
    return at;
  };
  const range = (q: RangeParams) => ({ organizationId: q.organizationId, registerIds: q.registerId, start: parseUtcTimestamp(q.start)!, end: parseUtcTimestamp(q.end)!, asOf: asOf(q.asOf) });
  const { metrics } = deps;
  const backend = deps.store.backend;
  /** Runs a read and observes its latency and size (answers only; refused reads are HTTP metrics). */
  const timedQuery = async (resolution: number, read: () => Promise<Buffer[]>) => {
    const started = performance.now();
    const pieces = await read();
    if (metrics) {
      const label = resolutionLabel(resolution);
      metrics.queryDuration.labels(backend, label).observe((performance.now() - started) / 1000);
      metrics.queryBytes.labels(backend, label).inc(pieces.reduce((n, p) => n + p.length, 0));
    }
    return pieces;
  };
  return [
    {
      method: 'POST',
      path: '/api/readings',
      summary: 'Store readings (atomic batch)',
      description:
        'Meters and registers are named by their externalId. All-or-nothing: any bad value gives 400 listing the offending paths (first 20) and stores nothing; 204 only after the batch is committed. ' +
        'Duplicate timestamps inside a request: the last wins. Posting a reading again for the same register and timestamp replaces its value and moves its updatedAt. ' +
        'The caller’s organization must have access to every meter. Batches of hundreds of thousands of readings are normal (body up to BODY_LIMIT_BYTES).',
      tags: ['Readings'],
      auth: { permission: 'Meter.Organization.ReadWrite' },
      bodyKind: 'raw',
      bodyLimit: 'large',
      body: readingsBatchSchema,
      bodyExample: {
        meters: [
          {
            id: 'MTR-000123',
            registers: [
              {
                id: 'import-kwh',
                values: [
                  { timestamp: '2024-06-01T10:00:00Z', value: 1.25, resolution: 900 },
                  { timestamp: '2024-06-01T10:15:00Z', value: 1.31, resolution: 900 },
                ],
              },
            ],
          },
        ],
      },
      rateLimit: { name: 'readings', windows: deps.rateLimit },
      responses: { 204: { description: 'Stored' } },
      async handler(req: ApiRequest) {
        const started = performance.now();
        try {
          const contentType = req.headers['content-type'];
          if (!isJsonContentType(contentType)) throw new HttpError('unsupported_content_type', `Expected Content-Type application/json, got ${contentType ? JSON.stringify(contentType) : 'none'}`);
          if (!req.rawBody || req.rawBody.length === 0) throw new HttpError('malformed_json', 'The request body is empty; a JSON document is required');
          const readings = await ingestReadings(deps.db, deps.store, req.principal!, req.rawBody);
          metrics?.readingsIngested.labels(backend).inc(readings);
          metrics?.batchSize.labels(backend).observe(readings);
          metrics?.ingestDuration.labels(backend).observe((performance.now() - started) / 1000);
        } catch (err) {
          metrics?.batchesRefused.labels(refusalReason(err)).inc();
          throw err;
        }
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/api/readings',
      summary: 'Readings of registers over a period, as stored or in buckets',
      description:
        '`resolution` 0 (default): readings as stored. R > 0: buckets of R seconds aligned to the UTC epoch (R = 86400: local days of each register’s time zone), ' +
        'energy and volume summed, other quantities averaged; only buckets with data are returned; a bucket’s updatedAt is the latest of its readings. ' +
        'R must divide a day evenly (60, 300, 900, 3600, …, 86400) or be a whole number of days; any other R is a 400. ' +
        'Bucket values are computed and rounded to 12 significant digits (no binary float noise such as 89.14799999999998); readings as stored are returned exactly as posted. ' +
        'At most READINGS_MAX_POINTS readings per response (400 beyond).',
      tags: ['Readings'],
      auth: { permission: 'Meter.Organization.Read', organization: { in: 'query', name: 'organizationId' } },
      query: querySchema({ ...rangeProperties, resolution: { type: 'integer', minimum: 0, maximum: 31 * 86400, default: 0, description: 'Seconds; 0 = as stored.' }, ...asOfProperty }, [
        'organizationId',
        'registerId',
        'start',
        'end',
      ]),
      responses: { 200: { description: 'Per register, time-ordered readings', schema: registerReadingsSchema } },
      async handler(req: ApiRequest<unknown, RangeParams>) {
        const resolution = req.query.resolution ?? 0;
        return readingsReply(await timedQuery(resolution, () => queryReadings(deps, { ...range(req.query), resolution }, req.principal!)));
      },
    },
    {
      method: 'GET',
      path: '/api/readings/average/hourly',
      summary: 'Hourly averages of registers over a period',
      description: 'The average of the readings in each UTC hour of [start, end) with data, whatever the register kind; resolution 3600.',
      tags: ['Readings'],
      auth: { permission: 'Meter.Organization.Read', organization: { in: 'query', name: 'organizationId' } },
      query: querySchema({ ...rangeProperties, ...asOfProperty }, ['organizationId', 'registerId', 'start', 'end']),
      responses: { 200: { description: 'Per register, hourly averages', schema: registerReadingsSchema } },
      async handler(req: ApiRequest<unknown, RangeParams>) {
        return readingsReply(await timedQuery(3600, () => queryReadings(deps, { ...range(req.query), resolution: 3600, forceAverage: true }, req.principal!)));
      },
    },
    {
      method: 'GET',
      path: '/api/readings/versions',
      summary: 'Every value the readings of registers have had',
      description:
        'For each reading in [start, end) whose value or resolution was corrected, every version: its value and resolution, when it was recorded, and when the next one was (null for the current). ' +
        'Readings with a single version are left out; a reading posted again unchanged keeps its version. Versions superseded before READING_VERSIONS_RETENTION are purged. ' +
        'Each register once, in the order asked; a virtual register has none (its values are computed). At most READINGS_MAX_POINTS versions (400 beyond).',
      tags: ['Readings'],
      auth: { permission: 'Meter.Organization.Read', organization: { in: 'query', name: 'organizationId' } },
      query: querySchema(rangeProperties, ['organizationId', 'registerId', 'start', 'end']),
      responses: { 200: { description: 'Per register and reading, its versions', schema: readingVersionsSchema } },
      async handler(req: ApiRequest<unknown, RangeParams>) {
        return { status: 200, body: await queryVersions(deps, { ...range(req.query), resolution: 0 }, req.principal!) };
      },
    },
  ];
}
