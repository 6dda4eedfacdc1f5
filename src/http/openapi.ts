// The OpenAPI 3.1 document, generated from the same route table and schemas the server compiles.
// Schemas carrying a `title` become named components; every route gets its error responses,
// its permission/feature/scope requirement and its rate limit in the description.
import { ERROR_CATALOGUE, problemSchema } from './errors.ts';
import { describeQuota } from './rateLimit.ts';
import type { JsonSchema, RouteDef } from './types.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Extra named schemas to publish (code tables and the like). */
  components?: Record<string, JsonSchema>;
}

type Json = Record<string, unknown>;

class ComponentCollector {
  readonly schemas: Record<string, Json> = {};
  private readonly owners = new Map<string, unknown>();

  /** Replaces titled sub-schemas with `$ref`s, collecting them once. */
  lift(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.lift(s));
    if (!schema || typeof schema !== 'object') return schema;
    const obj = schema as Json;
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
  if (def.auth !== 'public') {
    add(401, 'No, invalid or expired access token');
    add(403, 'Missing permission, scope, feature or organization access');
  }
  if (def.params) add(404, 'Unknown id');
  if (def.body || def.bodyKind === 'raw') add(413, 'Body larger than the configured limit');
  if (def.rateLimit) {
    out['429'] = {
      description: `Rate limit exceeded (${describeQuota(def.rateLimit.name, def.rateLimit.windows)}). Plain-text body; wait \`Retry-After\` seconds.`,
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: { 'text/plain': { schema: { type: 'string' } } },
    };
  }
  add(500, `${ERROR_CATALOGUE.internal_error.title} (no internals; quote X-Request-Id)`);
  return out;
}

export function buildOpenApi(defs: readonly RouteDef[], info: OpenApiInfo): Json {
  const collector = new ComponentCollector();
  collector.lift(problemSchema);
  for (const [name, schema] of Object.entries(info.components ?? {})) collector.schemas[name] = collector.lift({ ...schema, title: undefined }) as Json;
  const paths: Record<string, Json> = {};
  for (const def of defs) {
    const path = openApiPath(def.path);
    const operation: Json = {
      operationId: `${def.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: def.summary,
      description: [def.description, accessText(def)].filter(Boolean).join('\n\n'),
      tags: [...def.tags],
      parameters: [...parameters(def.params, 'path', collector), ...parameters(def.query, 'query', collector)],
      responses: {} as Json,
    };
    if (def.auth !== 'public') operation.security = [{ bearer: [] }];
    if (def.body) {
      const mediaType = def.bodyKind === 'form' ? 'application/x-www-form-urlencoded' : (def.bodyMediaType ?? 'application/json');
      operation.requestBody = { required: true, content: { [mediaType]: { schema: collector.lift(def.body) } } };
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
      responses[status] = response;
    }
    Object.assign(responses, errorResponses(def));
    (paths[path] ??= {})[def.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    paths,
    components: {
      schemas: collector.schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An access token from POST /oauth/token (client credentials), or a personal access token.',
        },
      },
    },
  };
}
