// What the OpenAPI document says beyond the route table: its title, the code tables it publishes,
// a description for every tag, the areas that group the tags (by path), and the OAuth 2.0 scopes
// a client-credentials token can carry. The generator (src/http/openapi.ts) knows no domain; this
// is where the domains' vocabulary meets it.
import { PERMISSIONS, VTN_SCOPES } from './auth/catalogue.ts';
import { CODE_TABLES, codeSchema } from './codes.ts';
import type { OpenApiInfo } from './http/openapi.ts';

const TAGS: Record<string, string> = {
  Authentication: 'Access tokens by OAuth 2.0 client credentials, and who a token says its caller is.',
  'Organization clients': 'OAuth clients of an organization: create, list, rotate secrets, delete.',
  'VTN credentials': 'Credentials of VTN clients (VENs and business logic) with their OpenADR scopes.',
  Meters: 'The meters and registers an organization may see.',
  Readings: 'Meter readings in (atomic batches) and out (as stored, in buckets, hourly averages).',
  Grid: 'Grid resources, market zones and their participants.',
  'Products: orders': 'Flexibility and availability orders, and acceptances.',
  'Products: offers': 'Availability offers of grid resources.',
  'Products: transactions': 'Flexibility and availability transactions with their delivery validation, and their impact on substations.',
  'Products: settlement': 'Settlement specifications: remuneration per counterpart and resource over a period.',
  'OpenADR VTN: programs': 'OpenADR 3 programs.',
  'OpenADR VTN: events': 'OpenADR 3 events of programs, with their intervals and payloads.',
  'OpenADR VTN: reports': 'OpenADR 3 reports sent by VENs.',
  'OpenADR VTN: subscriptions': 'OpenADR 3 subscriptions: webhooks notified of changes (docs/vtn.md).',
  'OpenADR VTN: vens': 'OpenADR 3 VENs.',
  'OpenADR VTN: resources': 'OpenADR 3 resources of a VEN.',
  'OpenADR 3.1.0: programs': 'OpenADR 3.1.0 programs: the same programs as under /api/openadr/v1, in 3.1 representation (docs/openadr-3.1.md).',
  'OpenADR 3.1.0: events': 'OpenADR 3.1.0 events (active filter, duration).',
  'OpenADR 3.1.0: reports': 'OpenADR 3.1.0 reports (programID optional: it is the event’s).',
  'OpenADR 3.1.0: subscriptions': 'OpenADR 3.1.0 subscriptions: webhooks with CRUD operation names.',
  'OpenADR 3.1.0: vens': 'OpenADR 3.1.0 VENs (resources are first-level).',
  'OpenADR 3.1.0: resources': 'OpenADR 3.1.0 resources, first-level objects naming their VEN.',
  'OpenADR 3.1.0: notifiers': 'OpenADR 3.1.0 notifier bindings (webhook, MQTT) and the MQTT topic names a client may subscribe to.',
  'OpenADR 3.1.0: auth': 'OpenADR 3.1.0: where to get an access token.',
  'Admin: identity': 'Global administrators: organizations, roles, users and their personal access tokens.',
  'Admin: meters': 'Global administrators: meters, registers (virtual definitions included) and baseline event days.',
  'Admin: grid': 'Global administrators: grid resources, market zones and substations.',
  'Admin: products': 'Global administrators: orders on behalf of organizations, acceptances, clearing, delivery validation on demand.',
  'Admin: VTN notifications': 'Global administrators: webhook notifications by delivery state, the retry of dead ones, and the MQTT outbox.',
  Operations: 'Liveness, Prometheus metrics and this document.',
  Console: 'The analyst console (/console) and this reference (/docs): pages and their files.',
};

/** Areas in the order the reference shows them; the last takes any path no prefix names. */
const AREAS: OpenApiInfo['areas'] = [
  { name: 'Identity and access', prefixes: ['/oauth', '/api/me', '/api/organization', '/api/openadr/vtn'] },
  { name: 'Meter data', prefixes: ['/api/meter', '/api/readings'] },
  { name: 'Grid and market', prefixes: ['/api/grid', '/api/product'] },
  { name: 'OpenADR VTN', prefixes: ['/api/openadr/v1'] },
  { name: 'OpenADR 3.1.0', prefixes: ['/api/openadr/3.1.0'] },
  { name: 'Administration', prefixes: ['/api/admin'] },
  { name: 'Console', prefixes: ['/console', '/docs', '/'] },
  { name: 'Operations', prefixes: ['/health', '/metrics', '/api/openapi.json'] },
];

const SCOPE_MEANINGS: Record<string, string> = {
  read_all: 'VTN: read everything the credential may see',
  write_programs: 'VTN: write programs (business logic)',
  write_events: 'VTN: write events (business logic)',
  write_reports: 'VTN: write reports',
  write_subscriptions: 'VTN: write subscriptions',
  write_vens: 'VTN: write VENs and their resources',
  read_targets: 'VTN: read programs and events',
  read_ven_objects: 'VTN: read VENs, resources, reports and subscriptions',
};

export function openApiInfo(tokenAudience: string, vtn31BasePath = '/api/openadr/3.1.0'): OpenApiInfo {
  return {
    title: 'Flex energy-flexibility platform',
    version: '0.1.0',
    description:
      'Meter data, flexibility and availability products, and an OpenADR-style VTN. Errors are RFC 7807 problem details (see the Problem schema); numeric codes are the schemas named after their tables. ' +
      'Open /console for the analyst console and /docs for this reference.',
    components: Object.fromEntries(CODE_TABLES.map((t) => [t.name, codeSchema(t)])),
    tags: TAGS,
    areas: AREAS.map((a) => (a.name === 'OpenADR 3.1.0' ? { ...a, prefixes: [vtn31BasePath] } : a)),
    oauthScopes: {
      ...Object.fromEntries(PERMISSIONS.map((p) => [p, `Organization client permission ${p}${p.endsWith('ReadWrite') ? ' (implies Read)' : ''}`])),
      ...Object.fromEntries(VTN_SCOPES.map((s) => [s, SCOPE_MEANINGS[s] ?? s])),
    },
    tokenUrl: '/oauth/token',
    tokenAudience,
  };
}
