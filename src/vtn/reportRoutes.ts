// /api/openadr/v1/reports — reports of the caller's VTN.
import { querySchema } from '../http/schemas.ts';
import type { RouteDef } from '../http/types.ts';
import { SCOPES } from './access.ts';
import { pageQuery, VTN, windowQuery, type VtnDeps } from './context.ts';
import { collectionRoutes, kindOperations } from './crud.ts';
import { createReport, deleteReport, getReport, listReports, updateReport, type ReportBody, type ReportQuery } from './reports.ts';
import { name128, objectId, reportSchema } from './schemas.ts';

export function reportRoutes(deps: VtnDeps): RouteDef[] {
  return collectionRoutes<ReportQuery, ReportBody>({
    path: `${VTN}/reports`,
    idParam: 'reportID',
    noun: 'report',
    schema: reportSchema,
    example: {
      programID: 'program-1',
      eventID: 'event-1',
      clientName: 'ven-north-17',
      reportName: 'Evening peak usage',
      resources: [
        {
          resourceName: 'battery-1',
          intervalPeriod: { start: '2024-06-15T16:00:00Z', duration: 'PT1H' },
          intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [3.2] }] }],
        },
      ],
    },
    query: querySchema({
      programID: { ...objectId, description: 'Keep reports of this program.' },
      eventID: { ...objectId, description: 'Keep reports of this event.' },
      clientName: { ...name128, description: 'Keep reports with this clientName.' },
      ...pageQuery,
      ...windowQuery,
    }),
    readScopes: SCOPES.readReports,
    writeScopes: SCOPES.writeReports,
    readsFrom: () => ['REPORT'],
    ...kindOperations(deps, { list: listReports, create: createReport, get: getReport, update: updateReport, remove: deleteReport }),
    notes: {
      list: 'In creation order. x-start/x-end keep reports whose span (the hull of their resources’ intervals, docs/vtn.md) overlaps the window. VEN clients see only the reports they created.',
      create: 'programID and eventID must name an existing program and an event of that program (400).',
    },
  });
}
