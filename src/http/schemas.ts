// Small JSON Schema builders shared by every domain's route schemas.
import type { JsonSchema } from './types.ts';

export const INT32_MAX = 2_147_483_647;

/** A platform object id: int32, positive. */
export const int32Id = { type: 'integer', minimum: 1, maximum: INT32_MAX } as const;
/** Request timestamps: ISO 8601 in UTC (`Z`). */
export const utcDateTime = { type: 'string', format: 'utc-date-time' } as const;
/** Response timestamps (fast-json-stringify writes Date objects as ISO 8601 UTC). */
export const dateTime = { type: 'string', format: 'date-time' } as const;

export function objectSchema(properties: Record<string, unknown>, required: readonly string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required: [...required], additionalProperties: false, ...extra };
}

/** Path parameters that are int32 ids. */
export function idParams(...names: string[]): JsonSchema {
  return objectSchema(Object.fromEntries(names.map((n) => [n, int32Id])), names);
}

export function querySchema(properties: Record<string, unknown>, required: readonly string[] = []): JsonSchema {
  return objectSchema(properties, required);
}

export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000, description: 'Maximum number of items (default 1000).' },
  offset: { type: 'integer', minimum: 0, default: 0, description: 'Items to skip.' },
} as const;

/** Paged admin lists answer a bare array (the page) and the number of items matching the query
 * across all pages in this header (docs/endpoints.md, "Conventions"). */
export const TOTAL_COUNT_HEADER = 'X-Total-Count';

export const totalCountHeader = {
  [TOTAL_COUNT_HEADER]: { description: 'Items matching the query across all pages (the page is `limit` items from `offset`).', schema: { type: 'integer', minimum: 0 } },
} as const;

/** A page of a list and the number of items across all pages. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** The reply of a paged list: the page as body, the total in X-Total-Count. */
export function pageReply<T>(page: Page<T>): { status: 200; body: T[]; headers: Record<string, string> } {
  return { status: 200, body: page.items, headers: { [TOTAL_COUNT_HEADER]: String(page.total) } };
}

export function arrayOf(items: unknown, extra: JsonSchema = {}): JsonSchema {
  return { type: 'array', items, ...extra };
}

/** The schema, or null. Written as a type union rather than `anyOf` so that Ajv still applies
 * `default`s inside it (it ignores them under anyOf) and OpenAPI 3.1 reads it plainly. */
export function nullable(schema: JsonSchema, extra: JsonSchema = {}): JsonSchema {
  const type = schema.type;
  const types = Array.isArray(type) ? type : [type];
  const out: JsonSchema = { ...schema, type: types.includes('null') ? types : [...types, 'null'], ...extra };
  if (Array.isArray(schema.enum)) out.enum = [...(schema.enum as unknown[]), null];
  return out;
}
