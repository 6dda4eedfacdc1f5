// GET …/reports/{reportID}/processing, on both OpenADR surfaces: what became of a report's USAGE
// and DEMAND payloads (docs/flexibility-loop.md). OpenADR 3.0.1 and 3.1.0 give a report no status
// (a report is a record the VTN keeps as sent), so the answer is this extension beside it, read
// by whoever may read the report: its writer (a VEN client) or business logic.
import { notFound } from '../http/errors.ts';
import { arrayOf, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { SCOPES, vtnAuth, vtnCaller } from './access.ts';
import { TAG_PREFIX, VTN, type VtnDeps } from './context.ts';
import { findObject } from './objects.ts';
import { objectId } from './schemas.ts';
import { query } from './sql.ts';

const refusal = objectSchema({ path: { type: 'string' }, reason: { type: 'string' } }, ['path', 'reason'], { title: 'UsageRefusal' });

export const processingSchema = objectSchema(
  {
    reportID: { type: 'string' },
    state: {
      type: 'string',
      enum: ['no usage', 'pending', 'stored', 'partly stored', 'refused'],
      description: 'no usage: no USAGE or DEMAND payloads; pending: not stored yet; stored / partly stored / refused: see resources.',
    },
    processedAt: { type: ['string', 'null'], format: 'date-time' },
    resources: arrayOf(
      objectSchema(
        {
          resourceName: { type: 'string' },
          state: { type: 'string', enum: ['stored', 'partly stored', 'refused'] },
          readings: { type: 'integer', description: 'Readings written to the actual register of the bound grid resource.' },
          reason: { type: ['string', 'null'], description: 'Why (part of) the resource’s usage was not stored.' },
          refused: arrayOf(refusal, { description: 'Intervals refused, with the reason (the first 20).' }),
        },
        ['resourceName', 'state', 'readings', 'reason', 'refused'],
        { title: 'UsageResourceOutcome' },
      ),
    ),
  },
  ['reportID', 'state', 'processedAt', 'resources'],
  { title: 'UsageReportProcessing' },
);

export function usageReportRoutes(deps: VtnDeps, basePath = VTN, tagPrefix = TAG_PREFIX): RouteDef[] {
  return [
    {
      method: 'GET',
      path: `${basePath}/reports/:reportID/processing`,
      summary: 'What became of a report’s usage (extension)',
      description:
        'USAGE (KWH) and DEMAND (KW) payloads of a VEN resource bound to a grid resource become readings of its actual register; this tells which were stored and why others were refused (docs/flexibility-loop.md).',
      tags: [`${tagPrefix}: reports`],
      auth: vtnAuth(SCOPES.readReports),
      params: objectSchema({ reportID: objectId }, ['reportID']),
      responses: { 200: { description: 'The processing state', schema: processingSchema } },
      async handler(req: ApiRequest<{ reportID: string }>) {
        const caller = vtnCaller(req.principal);
        const report = await findObject(deps.pool, 'vtn_reports', caller, req.params.reportID, { visibility: 'owned' });
        if (!report) throw notFound(`Report ${req.params.reportID}`);
        const rows = await query<{ state: string; outcome: { state: string; resources: unknown[] } | null; processedAt: Date | null }>(
          deps.pool,
          'SELECT state, outcome, processed_at AS "processedAt" FROM vtn_usage_reports WHERE organization_id = $1 AND report_id = $2',
          [caller.organizationId, req.params.reportID],
        );
        const row = rows[0];
        const body = !row
          ? { reportID: req.params.reportID, state: 'no usage', processedAt: null, resources: [] }
          : row.state === 'pending' || !row.outcome
            ? { reportID: req.params.reportID, state: 'pending', processedAt: null, resources: [] }
            : { reportID: req.params.reportID, state: row.outcome.state, processedAt: row.processedAt, resources: row.outcome.resources };
        return { status: 200, body };
      },
    },
  ];
}
