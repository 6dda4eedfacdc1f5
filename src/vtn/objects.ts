// Row-level operations every object kind shares: find one object the caller may see (optionally
// locked for an update), insert, update and delete rows, and the privacy condition that limits
// a VEN client to its own objects and to what targets it.
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { targetFilter, type TargetParams } from './context.ts';
import { query, Where, type Stamp } from './sql.ts';
import { clientReachSql } from './visibility.ts';

export type Visibility = 'targeted' | 'owned' | 'ven' | 'resource';

/** SQL condition on alias `t` limiting a VEN client; undefined for business-logic clients. */
export function visibleTo(caller: VtnCaller, visibility: Visibility, w: Where): string | undefined {
  if (!caller.ven) return undefined;
  const client = w.param(caller.clientId);
  switch (visibility) {
    case 'targeted':
      // Untargeted programs and events are for everyone; targeted ones for the VENs they reach.
      // The reach is the caller's (its organization a parameter, not t's column): computed once
      // for the query, not once per row.
      return `(cardinality(t.target_keys) = 0 OR t.target_keys && ${clientReachSql(w.param(caller.organizationId), client)})`;
    case 'owned':
      return `t.owner_client_id = ${client}`;
    case 'ven':
      return `t.client_id = ${client}`;
    case 'resource':
      return `EXISTS (SELECT 1 FROM vtn_vens v WHERE v.organization_id = t.organization_id AND v.id = t.ven_id AND v.client_id = ${client})`;
  }
}

export interface FoundRow {
  doc: string;
  createdDateTime: string;
  modificationDateTime: string;
  [column: string]: unknown;
}

export interface FindOptions {
  visibility: Visibility;
  /** Extra columns to return (SQL on alias `t`). */
  columns?: string;
  /** Extra conditions (e.g. the resource's VEN). */
  where?: (w: Where) => void;
  /** Lock the row for an update or delete in this transaction. */
  forUpdate?: boolean;
  /** SQL producing the served JSON text (default: the stored document); a function may add
   * parameters. */
  docExpression?: string | ((w: Where) => string);
}

/** A kind's own name as a target type of the filter (OpenADR 3.0.1's PROGRAM_NAME, EVENT_NAME,
 * VEN_NAME, RESOURCE_NAME): `[type, SQL of the name on alias t]`. */
export type NameTarget = readonly [type: string, column: string];

/** The conditions every listing starts from: the caller's organization and, when the query has
 * one, its target filter (a bad one is a 400 before any SQL). The filter keeps objects having any
 * of the targets asked for; with `nameTarget`, the object's name counts as one of its targets
 * (clients look programs and VENs up by `targetType=PROGRAM_NAME`/`VEN_NAME`). This only narrows
 * a listing: what a VEN client may see is decided by visibility.ts alone. */
export function listWhere(caller: VtnCaller, targets?: TargetParams, nameTarget?: NameTarget): Where {
  const keys = targets && targetFilter(targets);
  const w = new Where();
  w.add(`t.organization_id = ${w.param(caller.organizationId)}`);
  if (keys) {
    const k = w.param(keys);
    const byName = nameTarget ? ` OR ('${nameTarget[0]}' || chr(31) || ${nameTarget[1]}) = ANY(${k}::text[])` : '';
    w.add(`(t.target_keys && ${k}::text[]${byName})`);
  }
  return w;
}

/** Adds what a VEN client may see of the kind (nothing for business-logic clients). */
export function restrictTo(w: Where, caller: VtnCaller, visibility: Visibility): Where {
  const visible = visibleTo(caller, visibility, w);
  if (visible) w.add(visible);
  return w;
}

/** One object of the caller's VTN that the caller may see, or undefined (→ 404). */
export async function findObject(db: Queryable, table: string, caller: VtnCaller, id: string, options: FindOptions): Promise<FoundRow | undefined> {
  const w = new Where();
  w.add(`t.organization_id = ${w.param(caller.organizationId)}`).add(`t.id = ${w.param(id)}`);
  options.where?.(w);
  restrictTo(w, caller, options.visibility);
  const columns = options.columns ? `, ${options.columns}` : '';
  const docExpression = typeof options.docExpression === 'function' ? options.docExpression(w) : options.docExpression;
  const rows = await query<FoundRow>(
    db,
    `SELECT ${docExpression ?? 't.doc::text'} AS doc, t.doc->>'createdDateTime' AS "createdDateTime", t.doc->>'modificationDateTime' AS "modificationDateTime"${columns}
     FROM ${table} t ${w.sql}${options.forUpdate ? ' FOR UPDATE' : ''}`,
    w.values,
  );
  return rows[0];
}

/** A new object's row: the kind's columns with the caller's organization and the stamp's id and times. */
export async function insertRow(tx: Queryable, table: string, caller: VtnCaller, stamp: Stamp, kindColumns: Record<string, unknown>): Promise<void> {
  const columns = { organization_id: caller.organizationId, id: stamp.id, created_at: stamp.createdDateTime, modified_at: stamp.modificationDateTime, ...kindColumns };
  const names = Object.keys(columns);
  const text = `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`;
  await query(tx, text, Object.values(columns));
}

/** A replaced object's row: the kind's columns and the stamp's modification time. */
export async function updateRow(tx: Queryable, table: string, caller: VtnCaller, stamp: Stamp, kindColumns: Record<string, unknown>): Promise<void> {
  const columns = { ...kindColumns, modified_at: stamp.modificationDateTime };
  const names = Object.keys(columns);
  const text = `UPDATE ${table} SET ${names.map((n, i) => `${n} = $${i + 3}`).join(', ')} WHERE organization_id = $1 AND id = $2`;
  await query(tx, text, [caller.organizationId, stamp.id, ...Object.values(columns)]);
}

export async function deleteRow(tx: Queryable, table: string, organizationId: number, id: string): Promise<void> {
  await query(tx, `DELETE FROM ${table} WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
}
