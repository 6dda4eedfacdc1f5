// The OpenAPI 3.1 document, generated from the same route table and schemas the server compiles.
// Schemas carrying a `title` become named components; every route gets its error responses (at
// least one 4xx), its security requirement (none for public routes; the OAuth 2.0 client
// credentials scheme with the permission or scope the route needs, and bearer for personal
// access tokens), its permission/feature/scope and rate limit in the description, and an example
// of its request body. Tags are listed with descriptions and grouped by area (x-tagGroups),
// the area derived from the route's path. `npx @redocly/cli lint` passes with no problems
// (test/integration/openapiLint.test.ts).
import { BYTES_PER_JSON_VALUE, defaultBodyLimit } from './body.ts';
import { ERROR_CATALOGUE, problemSchema } from './errors.ts';
import { describeQuota } from './rateLimit.ts';
import type { JsonSchema, RouteDef } from './types.ts';

export interface OpenApiArea {
  name: string;
  /** Routes whose path starts with one of these belong to the area (longest prefix wins). */
  prefixes: readonly string[];
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Extra named schemas to publish (code tables and the like). A titled schema in a route with
   * the same name is written as a reference to it (with what differs beside the `$ref`). */
  components?: Record<string, JsonSchema>;
  /** Description of every tag the routes use (a tag without one stops the start). */
  tags: Readonly<Record<string, string>>;
  /** Areas grouping the tags (x-tagGroups), by path; routes matching none go to the last. */
  areas: readonly OpenApiArea[];
  /** OAuth 2.0 scopes that tokens from the token endpoint can carry, with their meaning. */
  oauthScopes: Readonly<Record<string, string>>;
  /** Path of the token endpoint (client credentials). */
  tokenUrl: string;
  /** The `audience` the token endpoint needs (its first configured one), for clients such as /docs. */
  tokenAudience: string;
}

type Json = Record<string, unknown>;

class ComponentCollector {
  readonly schemas: Record<string, Json> = {};
  private readonly owners = new Map<string, unknown>();
  /** Published components (code tables) that titled variants in routes refer to. */
  private readonly canonical = new Map<string, Json>();

  /** Publishes a named component; route schemas with this title then refer to it. */
  publish(name: string, schema: JsonSchema): void {
    const { title: _title, ...rest } = schema;
    this.canonical.set(name, rest);
    this.schemas[name] = this.lift(rest) as Json;
  }

  /** A variant of a published component (nullable, another description or default): a `$ref`
   * with what differs written beside it (OpenAPI 3.1 allows siblings of `$ref`). */
  private refer(name: string, obj: Json): Json {
    const canonical = this.canonical.get(name)!;
    const ref = { $ref: `#/components/schemas/${name}` };
    const nullable = Array.isArray(obj.enum) && obj.enum.includes(null);
    const out: Json = nullable ? { anyOf: [ref, { type: 'null' }] } : { ...ref };
    for (const [key, value] of Object.entries(obj)) {
      if (key === 'title' || key === 'type' || key === 'enum') continue;
      if (JSON.stringify(canonical[key]) !== JSON.stringify(value)) out[key] = value;
    }
    return out;
  }

  /** Replaces titled sub-schemas with `$ref`s, collecting them once. */
  lift(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.lift(s));
    if (!schema || typeof schema !== 'object') return schema;
    const obj = schema as Json;
    if (typeof obj.title === 'string' && this.canonical.has(obj.title)) return this.refer(obj.title, obj);
    const copy: Json = {};
    for (const [key, value] of Object.entries(obj)) {
      copy[key] = key === 'example' || key === 'enum' || key === 'const' || key === 'default' ? value : this.lift(value);
    }
    const title = obj.title;
    if (typeof title === 'string' && /^[A-Za-z0-9_.-]+$/.test(title) && (obj.type === 'object' || obj.type === 'array' || obj.enum)) {
      const owner = this.owners.get(title);
      if (owner !== undefined && owner !== schema && JSON.stringify(owner) !== JSON.stringify(schema)) {
        throw new Error(`Two different schemas are titled ${title}; titles name OpenAPI components and must be unique`);
      }
      this.owners.set(title, schema);
      this.schemas[title] = copy;
      return { $ref: `#/components/schemas/${title}` };
    }
    return copy;
  }
}

function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query', collector: ComponentCollector): Json[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, prop]) => {
    const param: Json = {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: collector.lift(prop),
    };
    if (prop.description) param.description = prop.description;
    if (prop.type === 'array') {
      param.style = 'form';
      param.explode = true;
      param.description = `${prop.description ?? ''} Repeat the parameter or separate values with commas.`.trim();
    }
    return param;
  });
}

function accessText(def: RouteDef): string {
  if (def.auth === 'public') return 'No authentication.';
  const parts: string[] = [];
  const a = def.auth;
  if (a.globalAdmin) parts.push('Global administrator (personal access token) only.');
  if (a.permission) parts.push(`Permission \`${a.permission}\`${a.permission.endsWith('.Read') ? ' (or its ReadWrite)' : ''}.`);
  if (a.feature) parts.push(`Feature \`${a.feature}\` enabled for the organization.`);
  if (a.anyScope) parts.push(`VTN credential scope: one of ${a.anyScope.map((s) => `\`${s}\``).join(', ')}.`);
  if (a.organization && a.organization.in !== 'principal') parts.push(`Organization: \`${a.organization.name}\` (${a.organization.in}).`);
  return parts.join(' ');
}

function errorResponses(def: RouteDef): Record<string, Json> {
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  const out: Record<string, Json> = {};
  const add = (status: number, description: string) => {
    if (!def.responses[status]) out[String(status)] = { description, content: problem };
  };
  if (def.params || def.query || def.body || def.bodyKind === 'raw' || def.bodyKind === 'form') add(400, 'Invalid input (problem details list `{path, message}`)');
  if (def.auth !== 'public' || def.ownBearer) {
    add(401, 'No, invalid or expired access token');
    add(403, 'Missing permission, scope, feature or organization access');
  }
  if (def.params) add(404, 'Unknown id');
  if (def.body || def.bodyKind === 'raw') {
    const limit = def.bodyLimit ?? defaultBodyLimit(def.bodyKind ?? (def.body ? 'json' : 'none'));
    add(413, `Body larger than this route's limit (${limit === 'large' ? 'BODY_LIMIT_BYTES' : `${limit} bytes`}), or a JSON body holding more than one value per ${BYTES_PER_JSON_VALUE} bytes of it`);
  }
  if (def.rateLimit) {
    out['429'] = {
      description: `Rate limit exceeded (${describeQuota(def.rateLimit.name, def.rateLimit.windows)}). Plain-text body; wait \`Retry-After\` seconds.`,
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: { 'text/plain': { schema: { type: 'string' } } },
    };
  }
  // Every operation documents a client error: a route without inputs can still be sent a body
  // over the limit or a malformed request line.
  const hasClientError = [...Object.keys(def.responses), ...Object.keys(out)].some((status) => status.startsWith('4'));
  if (!hasClientError) out['4XX'] = { description: 'Client error (for example a body over the configured limit)', content: problem };
  add(500, `${ERROR_CATALOGUE.internal_error.title} (no internals; quote X-Request-Id)`);
  return out;
}

/** Who may call: nobody needs a token (public), personal access tokens only (the admin API), or
 * a client-credentials token holding one of the listed scopes (a permission's ReadWrite also
 * grants its Read) or a personal access token. */
function securityOf(def: RouteDef): Json[] {
  if (def.auth === 'public') return def.ownBearer ? [{ bearer: [] }] : [];
  if (def.auth.globalAdmin) return [{ bearer: [] }];
  const scopes = def.auth.anyScope ? [...def.auth.anyScope] : def.auth.permission ? [def.auth.permission, ...(def.auth.permission.endsWith('.Read') ? [`${def.auth.permission}Write`] : [])] : [];
  const oauth = scopes.length > 0 ? scopes.map((scope) => ({ oauth2: [scope] })) : [{ oauth2: [] }];
  return [...oauth, { bearer: [] }];
}

function areaOf(path: string, areas: readonly OpenApiArea[]): string {
  let best: { name: string; length: number } | undefined;
  for (const area of areas) {
    for (const prefix of area.prefixes) {
      const matches = path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
      if (matches && (!best || prefix.length > best.length)) best = { name: area.name, length: prefix.length };
    }
  }
  return best?.name ?? areas.at(-1)!.name;
}

export function buildOpenApi(defs: readonly RouteDef[], info: OpenApiInfo): Json {
  const collector = new ComponentCollector();
  collector.lift(problemSchema);
  for (const [name, schema] of Object.entries(info.components ?? {})) collector.publish(name, schema);
  const paths: Record<string, Json> = {};
  const tagArea = new Map<string, string>();
  for (const def of defs) {
    for (const tag of def.tags) {
      if (info.tags[tag] === undefined) throw new Error(`Tag ${JSON.stringify(tag)} of ${def.method} ${def.path} has no description in the OpenAPI info`);
      if (!tagArea.has(tag)) tagArea.set(tag, areaOf(def.path, info.areas));
    }
    const path = openApiPath(def.path);
    const operation: Json = {
      operationId: `${def.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: def.summary,
      description: [def.description, accessText(def)].filter(Boolean).join('\n\n'),
      tags: [...def.tags],
      parameters: [...parameters(def.params, 'path', collector), ...parameters(def.query, 'query', collector)],
      responses: {} as Json,
    };
    operation.security = securityOf(def);
    if (def.body) {
      const mediaType = def.bodyKind === 'form' ? 'application/x-www-form-urlencoded' : (def.bodyMediaType ?? 'application/json');
      const media: Json = { schema: collector.lift(def.body) };
      if (def.bodyExample !== undefined) media.example = def.bodyExample;
      operation.requestBody = { required: true, content: { [mediaType]: media } };
    }
    const responses = operation.responses as Json;
    for (const [status, spec] of Object.entries(def.responses)) {
      const response: Json = { description: spec.description };
      if (spec.schema) response.content = { [spec.contentType ?? 'application/json']: { schema: collector.lift(spec.schema) } };
      else if (spec.contentType) response.content = { [spec.contentType]: { schema: { type: 'string' } } };
      if (def.rateLimit) {
        response.headers = {
          'X-Rate-Limit-Limit': { description: 'Maximum requests per minute', schema: { type: 'integer' } },
          'X-Rate-Limit-Remaining': { description: 'Requests remaining in the current window', schema: { type: 'integer' } },
          'X-Rate-Limit-Reset': { description: 'When the current window resets (ISO 8601 UTC)', schema: { type: 'string', format: 'date-time' } },
        };
      }
      if (spec.headers) response.headers = { ...(response.headers as Json | undefined), ...spec.headers };
      responses[status] = response;
    }
    Object.assign(responses, errorResponses(def));
    (paths[path] ??= {})[def.method.toLowerCase()] = operation;
  }
  const tags = [...tagArea.keys()].map((name) => ({ name, description: info.tags[name] }));
  const groups = info.areas
    .map((area) => ({ name: area.name, tags: [...tagArea].filter(([, a]) => a === area.name).map(([tag]) => tag) }))
    .filter((group) => group.tags.length > 0);
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    // Relative: the document is served by the server it describes, whatever name it is reached by.
    servers: [{ url: '/', description: 'This server' }],
    tags,
    'x-tagGroups': groups,
    paths,
    components: {
      schemas: collector.schemas,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: `OAuth 2.0 client credentials: an organization client or a VTN credential exchanges its client id and secret at ${info.tokenUrl} (form parameters, or HTTP Basic) together with \`audience=${info.tokenAudience}\`. Scopes narrow the token to some of the client's permissions or VTN scopes; none = all it holds.`,
          flows: { clientCredentials: { tokenUrl: info.tokenUrl, scopes: { ...info.oauthScopes } } },
          'x-flex-audience': info.tokenAudience,
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A personal access token (users, global administrators), or an access token obtained from the token endpoint.',
        },
      },
    },
  };
}
