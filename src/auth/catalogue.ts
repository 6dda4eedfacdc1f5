// The closed vocabularies of identity: features an organization can have, permissions a role
// can grant, and the OpenADR scopes a VTN credential can carry. Unknown values are refused (400).
// The route table (src/http/types.ts) takes its names from here as literal types, so a route that
// names a permission, feature or scope not listed here fails typecheck. Imports nothing.

export const FEATURES = ['Grid', 'DecisionSupport', 'ResourceManagement', 'Settlements', 'OpenADR'] as const;
export type Feature = (typeof FEATURES)[number];

/** Permissions are `<Area>.Organization.<Read|ReadWrite>`; ReadWrite implies Read. */
export const PERMISSION_AREAS = ['Order', 'Meter', 'Resource', 'Planning', 'Organization'] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];
export type Permission = `${PermissionArea}.Organization.${'Read' | 'ReadWrite'}`;
export const PERMISSIONS: readonly Permission[] = PERMISSION_AREAS.flatMap((area) => [`${area}.Organization.Read` as const, `${area}.Organization.ReadWrite` as const]);

/** OpenADR 3.0 scopes, plus 3.1's read_targets and read_ven_objects. */
export const VTN_SCOPES = [
  'read_all',
  'write_programs',
  'write_events',
  'write_reports',
  'write_subscriptions',
  'write_vens',
  'read_targets',
  'read_ven_objects',
] as const;
export type VtnScope = (typeof VTN_SCOPES)[number];

export const featureSchema = { title: 'Feature', type: 'string', enum: [...FEATURES] };
export const permissionSchema = { title: 'Permission', type: 'string', enum: [...PERMISSIONS] };
export const scopeSchema = { title: 'VtnScope', type: 'string', enum: [...VTN_SCOPES] };
