// `null` for an optional member that the OpenADR documents do not make nullable reads as if the
// member were absent (docs/vtn.md, "Null"). OpenADR clients generated from the documents send
// `null` for every optional member they were not given (`"randomizeStart": null`,
// `"intervalPeriod": null`, a 3.1 event's `"duration": null`); 3.0.1's own text reads
// "A randomizeStart of default null indicates no randomization", and openleadr-rs reads such
// nulls as absent. Removing them before validation lets the schema do the rest unchanged: the
// member's default applies (`timeZoneOffset` PT0S, `intervals` []), and a required member given
// as null is refused as missing (400 "must have required property"). Members that are nullable
// keep their null (stored and served as null).
//
// The walk follows the request schema (properties, array items, anyOf branches), built once per
// route at start; members not in the schema are left for the validator to refuse.
import type { JsonSchema } from '../http/types.ts';

interface Plan {
  /** Object members: whether each is nullable, and the plan inside it. */
  members?: Map<string, { nullable: boolean; plan: Plan | undefined }>;
  /** Array items. */
  items?: Plan;
}

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

function nullable(schema: Schema): boolean {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes('null')) return true;
  if (schema.enum?.includes(null)) return true;
  return (schema.anyOf ?? schema.oneOf ?? []).some(nullable);
}

function planOf(schema: Schema | undefined): Plan | undefined {
  if (!schema) return undefined;
  const branches = [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  const members = new Map<string, { nullable: boolean; plan: Plan | undefined }>();
  let items: Plan | undefined;
  for (const branch of branches) {
    for (const [name, member] of Object.entries(branch.properties ?? {})) {
      const known = members.get(name);
      // A member nullable in any branch keeps its null (the validator picks the branch).
      members.set(name, { nullable: (known?.nullable ?? false) || nullable(member), plan: known?.plan ?? planOf(member) });
    }
    if (branch.items) items ??= planOf(branch.items);
  }
  if (members.size === 0 && !items) return undefined;
  return { ...(members.size > 0 ? { members } : {}), ...(items ? { items } : {}) };
}

function apply(plan: Plan, value: unknown): void {
  if (Array.isArray(value)) {
    if (plan.items) for (const item of value) apply(plan.items, item);
    return;
  }
  if (value === null || typeof value !== 'object' || !plan.members) return;
  const object = value as Record<string, unknown>;
  for (const name of Object.keys(object)) {
    const member = plan.members.get(name);
    if (!member) continue;
    if (object[name] === null) {
      if (!member.nullable) delete object[name];
    } else if (member.plan) apply(member.plan, object[name]);
  }
}

/** A function removing, in place, the nulls of members that `schema` does not make nullable. */
export function nullsAsAbsent(schema: JsonSchema): (body: unknown) => unknown {
  const plan = planOf(schema as Schema);
  return (body) => {
    if (plan) apply(plan, body);
    return body;
  };
}
