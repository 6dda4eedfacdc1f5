// SQL plumbing shared by the VTN stores: prepared statements, WHERE building, JSON listing
// straight from the stored documents, and the VTN-assigned fields of a document.
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../store/database.ts';
import { sqlState } from '../store/retry.ts';
import type { ObjectKind } from './schemas.ts';

const statementNames = new Map<string, string>();

/** Runs a query as a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of on every request (the listing SQL varies only with the filters used). */
export async function query<R extends Record<string, any> = Record<string, any>>(db: Queryable, text: string, values: unknown[]): Promise<R[]> {
  let name = statementNames.get(text);
  if (!name) {
    name = `vtn_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (statementNames.size < 2000) statementNames.set(text, name);
  }
  const result = await db.query<R>({ name, text, values });
  return result.rows;
}

/** AND-combined conditions with numbered parameters. */
export class Where {
  readonly values: unknown[] = [];
  private readonly parts: string[] = [];

  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(condition: string): this {
    this.parts.push(condition);
    return this;
  }

  get sql(): string {
    return this.parts.length === 0 ? '' : `WHERE ${this.parts.join(' AND ')}`;
  }
}

export interface Page {
  skip: number;
  limit: number;
}

/** A JSON array of the stored documents, assembled by PostgreSQL: one round trip and one row
 * however many objects, and no serialization in this process. `order` lists columns of `t`
 * ending with a unique one (seq), so that skip/limit pages neither repeat nor miss objects;
 * ascending (NULLs last). */
export async function listDocuments(db: Queryable, table: string, where: Where, order: readonly string[], page: Page, docExpression = 't.doc::text'): Promise<string> {
  const limit = where.param(page.limit);
  const skip = where.param(page.skip);
  const by = order.join(', ');
  const text = `SELECT string_agg(body, ',' ORDER BY ${by}) AS body FROM (
    SELECT ${order.map((c) => `t.${c}`).join(', ')}, ${docExpression} AS body FROM ${table} t ${where.sql} ORDER BY ${by} LIMIT ${limit} OFFSET ${skip}
  ) t`;
  const rows = await query<{ body: string | null }>(db, text, where.values);
  return `[${rows[0]?.body ?? ''}]`;
}

/** VTN object ids: 96 random bits, URL-safe (matches `^[a-zA-Z0-9_-]*$`). */
export function newObjectId(): string {
  return randomBytes(12).toString('base64url');
}

/** A modification time that always moves forward, even within the same millisecond. */
export function nextModification(previous: string | undefined): string {
  const now = Date.now();
  const last = previous ? Date.parse(previous) : 0;
  return new Date(Math.max(now, last + 1)).toISOString();
}

export interface Stamp {
  id: string;
  createdDateTime: string;
  modificationDateTime: string;
}

/** The stamp of a new object: a fresh id, created and modified now. */
export function newStamp(): Stamp {
  const now = new Date().toISOString();
  return { id: newObjectId(), createdDateTime: now, modificationDateTime: now };
}

/** The stamp of a replaced object: its id and creation time kept, modified now (and always later
 * than the stored modification). */
export function replacedStamp(id: string, stored: { createdDateTime: string; modificationDateTime: string }): Stamp {
  return { id, createdDateTime: stored.createdDateTime, modificationDateTime: nextModification(stored.modificationDateTime) };
}

const READ_ONLY = new Set(['id', 'createdDateTime', 'modificationDateTime', 'objectType']);

/** The document as served: VTN-assigned fields first, then the client's fields (minus any
 * read-only values it sent, and minus `omit`). The body was validated with
 * additionalProperties:false at every level, so it holds only fields of the schema. */
export function documentOf(kind: ObjectKind, stamp: Stamp, body: Record<string, unknown>, extra: Record<string, unknown> = {}, omit: readonly string[] = []): Record<string, unknown> {
  const doc: Record<string, unknown> = { id: stamp.id, createdDateTime: stamp.createdDateTime, modificationDateTime: stamp.modificationDateTime, objectType: kind };
  for (const [key, value] of Object.entries(body)) {
    if (!READ_ONLY.has(key) && !omit.includes(key) && value !== undefined) doc[key] = value;
  }
  return Object.assign(doc, extra);
}

/** The name of the unique constraint a statement violated, if that is why it failed. */
export function violatedUnique(err: unknown): string | undefined {
  return sqlState(err) === '23505' ? ((err as { constraint?: string }).constraint ?? '') : undefined;
}
