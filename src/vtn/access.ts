// Who may call which VTN endpoint (the scope table, also in docs/vtn.md) and who the caller is
// inside its VTN. OpenADR 3.0 scopes plus 3.1's read_targets and read_ven_objects:
// - read_all reads everything the caller may see; read_targets reads programs and events;
//   read_ven_objects reads VENs, resources, reports and subscriptions;
// - write_<kind> writes that kind (write_vens covers resources).
// A credential holding write_programs or write_events is a business-logic (BL) client and sees
// its whole organization. Any other VTN credential is a VEN client: it sees only its own VENs,
// their resources, its reports and subscriptions, and programs and events that are untargeted
// or targeted at one of its VENs. A global administrator with an organization acts as BL there.
import type { VtnScope } from '../auth/catalogue.ts';
import { HttpError } from '../http/errors.ts';
import type { AuthRequirement, Principal } from '../http/types.ts';

export const SCOPES = {
  readPrograms: ['read_all', 'read_targets'],
  writePrograms: ['write_programs'],
  readEvents: ['read_all', 'read_targets'],
  writeEvents: ['write_events'],
  readReports: ['read_all', 'read_ven_objects'],
  writeReports: ['write_reports'],
  readSubscriptions: ['read_all', 'read_ven_objects'],
  writeSubscriptions: ['write_subscriptions'],
  readVens: ['read_all', 'read_ven_objects'],
  writeVens: ['write_vens'],
} as const satisfies Record<string, readonly VtnScope[]>;

/** The route table's requirement: one of the scopes, and the OpenADR feature in the caller's
 * own organization (the VTN namespace is always the caller's organization). */
export function vtnAuth(anyScope: readonly VtnScope[]): AuthRequirement {
  return { anyScope, feature: 'OpenADR' };
}

export interface VtnCaller {
  organizationId: number;
  /** Public client id of the credential (or `user:<id>`): owner of what it creates. */
  clientId: string;
  /** A VEN client: sees only its own objects and what targets it. */
  ven: boolean;
}

const BL_SCOPES = ['write_programs', 'write_events'];

export function vtnCaller(principal: Principal | undefined): VtnCaller {
  if (!principal) throw new HttpError('unauthorized', 'A bearer access token is required');
  if (principal.organizationId === null) {
    throw new HttpError('forbidden', 'This token belongs to no organization, so it has no VTN; use a VTN credential (or a user) of an organization');
  }
  const ven = principal.kind === 'vtn' && !BL_SCOPES.some((s) => principal.scopes.has(s));
  return { organizationId: principal.organizationId, clientId: principal.subject, ven };
}
