// /api/openadr/v1/events — events of the caller's VTN.
import { querySchema } from '../http/schemas.ts';
import type { RouteDef } from '../http/types.ts';
import { SCOPES } from './access.ts';
import { pageQuery, targetQuery, VTN, windowQuery, type VtnDeps } from './context.ts';
import { collectionRoutes, kindOperations } from './crud.ts';
import { createEvent, deleteEvent, getEvent, listEvents, updateEvent, type EventBody, type EventQuery } from './events.ts';
import { eventSchema, objectId } from './schemas.ts';

export function eventRoutes(deps: VtnDeps): RouteDef[] {
  return collectionRoutes<EventQuery, EventBody>({
    path: `${VTN}/events`,
    idParam: 'eventID',
    noun: 'event',
    schema: eventSchema,
    example: {
      programID: 'program-1',
      eventName: 'Evening peak',
      priority: 0,
      targets: [{ type: 'GROUP', values: ['north'] }],
      payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'PRICE', units: 'KWH', currency: 'NOK' }],
      intervalPeriod: { start: '2024-06-15T16:00:00Z', duration: 'PT1H' },
      intervals: [
        { id: 0, payloads: [{ type: 'PRICE', values: [1.25] }] },
        { id: 1, payloads: [{ type: 'PRICE', values: [1.6] }] },
      ],
    },
    query: querySchema({ programID: { ...objectId, description: 'Keep events of this program.' }, ...targetQuery, ...pageQuery, ...windowQuery }),
    readScopes: SCOPES.readEvents,
    writeScopes: SCOPES.writeEvents,
    readsFrom: (caller) => (caller.ven ? ['EVENT', 'VEN'] : ['EVENT']),
    ...kindOperations(deps, { list: listEvents, create: createEvent, get: getEvent, update: updateEvent, remove: deleteEvent }),
    notes: {
      list: 'By priority (lower first, none last), then creation. x-start/x-end keep events whose span (docs/vtn.md) overlaps the window. VEN clients see untargeted events and those targeting one of their VENs.',
      create: 'programID must name an existing program (400).',
    },
  });
}
