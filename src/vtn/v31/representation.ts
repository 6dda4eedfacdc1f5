// OpenADR 3.1.0 ↔ the stored (3.0.1) representation of the same objects (docs/openadr-3.1.md).
//
// Targets: 3.1 lists strings, 3.0.1 lists {type, values[]}. A 3.1 string `TYPE:value` whose TYPE
// is upper case letters, digits and `_` (starting with a letter) is the 3.0.1 target
// {type: TYPE, values: [value]}; any other string is {type: "TARGET", values: [string]}. Read the
// other way, TARGET values are served as they are and other types as `TYPE:value`, so a 3.1
// client and a 3.0.1 client address the same VENs (VEN_NAME:<venName>, GROUP:north, …) and
// both match on the same stored target keys. Operations: 3.1's CRUD names are 3.0.1's HTTP
// verbs (READ = GET, CREATE = POST, UPDATE = PUT, DELETE = DELETE).
import type { ValuesMap } from '../targets.ts';
import { valueText } from '../targets.ts';

/** The 3.0.1 target type of 3.1 targets written without a `TYPE:` prefix. */
export const PLAIN_TARGET = 'TARGET';
const TYPED = /^([A-Z][A-Z0-9_]{0,63}):(.+)$/s;

export type Operation31 = 'READ' | 'CREATE' | 'UPDATE' | 'DELETE';
export const TO_301_OPERATION: Record<Operation31, string> = { READ: 'GET', CREATE: 'POST', UPDATE: 'PUT', DELETE: 'DELETE' };
export const TO_31_OPERATION: Record<string, Operation31> = { GET: 'READ', POST: 'CREATE', PUT: 'UPDATE', DELETE: 'DELETE' };

/** 3.1 target strings → 3.0.1 valuesMaps (one per type, in first-seen order). */
export function targetsTo301(targets: readonly string[] | null | undefined): ValuesMap[] | null | undefined {
  if (targets === null || targets === undefined) return targets;
  const byType = new Map<string, string[]>();
  for (const target of targets) {
    const m = TYPED.exec(target);
    const [type, value] = m ? [m[1]!, m[2]!] : [PLAIN_TARGET, target];
    const values = byType.get(type);
    if (values) {
      if (!values.includes(value)) values.push(value);
    } else byType.set(type, [value]);
  }
  return [...byType].map(([type, values]) => ({ type, values }));
}

/** 3.0.1 valuesMaps → 3.1 target strings (values as text; duplicates dropped). */
export function targetsTo31(targets: readonly ValuesMap[] | null | undefined): string[] | null | undefined {
  if (targets === null || targets === undefined) return targets;
  const out = new Set<string>();
  for (const t of targets) for (const v of t.values) out.add(t.type === PLAIN_TARGET ? valueText(v) : `${t.type}:${valueText(v)}`);
  return [...out];
}

/** Keys for the 3.1 `targets` query parameter (the same keys as the stored ones). */
export function targetStrings301(targets: readonly string[]): ValuesMap[] {
  return targetsTo301(targets) ?? [];
}

type Doc = Record<string, any>;

/** What the 3.1 surface serves for a stored document. `extra`: the 3.1-only fields kept in `ext`
 * and the clientID kept in a column. */
export function to31(kind: string, doc: Doc, extra: { ext?: Doc | null; clientID?: string | null } = {}): Doc {
  const out: Doc = { ...doc };
  if ('targets' in out) out.targets = targetsTo31(out.targets);
  // 3.1 requires the descriptors' discriminator, which 3.0.1 leaves optional.
  if (Array.isArray(out.payloadDescriptors)) out.payloadDescriptors = out.payloadDescriptors.map((d: Doc) => withDescriptorType(kind, d));
  switch (kind) {
    case 'EVENT':
      if (Array.isArray(out.reportDescriptors)) out.reportDescriptors = out.reportDescriptors.map((d: Doc) => ('targets' in d ? { ...d, targets: targetsTo31(d.targets) } : d));
      break;
    case 'SUBSCRIPTION':
      if (Array.isArray(out.objectOperations)) {
        out.objectOperations = out.objectOperations.map((o: Doc) => ({ ...o, operations: o.operations.map((op: string) => TO_31_OPERATION[op] ?? op) }));
      }
      break;
    case 'VEN':
      // Resources are first-level objects in 3.1 (GET /resources?venID=…).
      delete out.resources;
      if (out.clientID === null) delete out.clientID;
      break;
  }
  if (extra.ext) Object.assign(out, extra.ext);
  if (extra.clientID !== undefined && extra.clientID !== null) out.clientID = extra.clientID;
  return out;
}

const REPORT_ONLY = ['readingType', 'accuracy', 'confidence'];

function withDescriptorType(kind: string, d: Doc): Doc {
  if (d === null || typeof d !== 'object' || d.objectType !== undefined) return d;
  const report = kind === 'REPORT' || (kind === 'PROGRAM' && REPORT_ONLY.some((k) => k in d));
  return { objectType: report ? 'REPORT_PAYLOAD_DESCRIPTOR' : 'EVENT_PAYLOAD_DESCRIPTOR', ...d };
}

/** The 3.1 notification (MQTT message body and 3.1 webhook shape). */
export function notification31(kind: string, operation: string, object: Doc): Doc {
  return { objectType: kind, operation: TO_31_OPERATION[operation] ?? operation, object, targets: object.targets ?? null };
}
