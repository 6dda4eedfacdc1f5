// /api/openadr/v1/programs — programs of the caller's VTN.
import { querySchema } from '../http/schemas.ts';
import type { RouteDef } from '../http/types.ts';
import { SCOPES } from './access.ts';
import { pageQuery, targetQuery, VTN, type VtnDeps } from './context.ts';
import { collectionRoutes, kindOperations } from './crud.ts';
import { createProgram, deleteProgram, getProgram, listPrograms, updateProgram, type ProgramBody, type ProgramQuery } from './programs.ts';
import { programSchema } from './schemas.ts';

export function programRoutes(deps: VtnDeps): RouteDef[] {
  return collectionRoutes<ProgramQuery, ProgramBody>({
    path: `${VTN}/programs`,
    idParam: 'programID',
    noun: 'program',
    schema: programSchema,
    example: {
      programName: 'ResTOU',
      programLongName: 'Residential time of use',
      retailerName: 'Flex Energi',
      country: 'NO',
      principalSubdivision: 'NO-03',
      intervalPeriod: { start: '2024-06-01T00:00:00Z', duration: 'PT1H' },
      payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'PRICE', units: 'KWH', currency: 'NOK' }],
    },
    query: querySchema({ ...targetQuery, ...pageQuery }),
    readScopes: SCOPES.readPrograms,
    writeScopes: SCOPES.writePrograms,
    readsFrom: (caller) => (caller.ven ? ['PROGRAM', 'VEN'] : ['PROGRAM']),
    ...kindOperations(deps, { list: listPrograms, create: createProgram, get: getProgram, update: updateProgram, remove: deleteProgram }),
    notes: {
      list: 'In creation order. VEN clients see untargeted programs and those targeting one of their VENs.',
      create: 'programName is required and unique within the VTN (409).',
      update: 'Replaces the program; programName stays unique (409).',
      remove: '409 while the program has events (they are not deleted with it).',
    },
  });
}
