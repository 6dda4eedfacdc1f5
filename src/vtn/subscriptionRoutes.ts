// /api/openadr/v1/subscriptions — webhook subscriptions of the caller's VTN.
import { querySchema } from '../http/schemas.ts';
import type { RouteDef } from '../http/types.ts';
import { SCOPES } from './access.ts';
import { pageQuery, targetQuery, VTN, type VtnDeps } from './context.ts';
import { collectionRoutes, kindOperations } from './crud.ts';
import { name128, OBJECT_KINDS, objectId, subscriptionSchema } from './schemas.ts';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  updateSubscription,
  type SubscriptionBody,
  type SubscriptionQuery,
} from './subscriptions.ts';

export function subscriptionRoutes(deps: VtnDeps): RouteDef[] {
  return collectionRoutes<SubscriptionQuery, SubscriptionBody>({
    path: `${VTN}/subscriptions`,
    idParam: 'subscriptionID',
    noun: 'subscription',
    schema: subscriptionSchema,
    example: {
      clientName: 'ven-north-17',
      programID: 'program-1',
      objectOperations: [{ objects: ['EVENT'], operations: ['POST', 'PUT', 'DELETE'], callbackUrl: 'https://ven.example.com/openadr/notifications', bearerToken: 'token-the-ven-checks' }],
      targets: [{ type: 'GROUP', values: ['north'] }],
    },
    query: querySchema({
      programID: { ...objectId, description: 'Keep subscriptions of this program.' },
      clientName: { ...name128, description: 'Keep subscriptions with this clientName.' },
      ...targetQuery,
      objects: { type: 'array', items: { type: 'string', enum: [...OBJECT_KINDS] }, minItems: 1, description: 'OpenADR 3.0.1: keep subscriptions to any of these object kinds.' },
      ...pageQuery,
    }),
    readScopes: SCOPES.readSubscriptions,
    writeScopes: SCOPES.writeSubscriptions,
    readsFrom: () => ['SUBSCRIPTION'],
    viewerOf: (caller) => `client:${caller.clientId}`,
    ...kindOperations(deps, { list: listSubscriptions, create: createSubscription, get: getSubscription, update: updateSubscription, remove: deleteSubscription }),
    notes: {
      list: 'In creation order. VEN clients see only the subscriptions they created. A bearerToken is shown only to the subscription’s writer.',
      create:
        'programID must name an existing program (400). Each callbackUrl must be http or https, without credentials, and (unless VTN_WEBHOOK_ALLOW_PRIVATE) not a loopback, private or link-local address. Notifications: POST callbackUrl with `{notificationID, objectType, operation, object, targets}` (schema VtnNotification) and `Authorization: Bearer <bearerToken>`; see docs/vtn.md.',
      remove: 'Pending notifications of the subscription are dropped; nothing more is sent for it.',
    },
  });
}
