// Targets are lists of `{type, values[]}`. For matching, each (type, value) pair becomes one
// string key `type U+001F value` stored in a text[] column, so "has a target of this type with
// any of these values" is an indexed array overlap (`target_keys && $keys`). Values are
// compared as text: the number 5 and the string "5" are the same target value, which is what a
// query parameter (always a string) can express.

export interface ValuesMap {
  type: string;
  values: unknown[];
}

const SEPARATOR = '\u001f';

export function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function targetKey(type: string, value: unknown): string {
  return `${type}${SEPARATOR}${valueText(value)}`;
}

/** Distinct keys of a target list (null and absent mean "no targets"). */
export function targetKeys(targets: readonly ValuesMap[] | null | undefined): string[] {
  if (!targets) return [];
  const keys = new Set<string>();
  for (const t of targets) for (const v of t.values) keys.add(targetKey(t.type, v));
  return [...keys];
}

/** Keys for the `targetType` + `targetValues` query filter. */
export function filterKeys(targetType: string, targetValues: readonly string[]): string[] {
  return targetValues.map((v) => targetKey(targetType, v));
}

export function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((k) => set.has(k));
}

export function overlaps(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === 0 || b.length === 0) return false;
  const set = new Set(a);
  return b.some((k) => set.has(k));
}

/** The target type naming a VEN (OpenADR's VEN_NAME): reaches the VEN whose name is granted
 * (visibility.ts). */
export const VEN_NAME_TARGET = 'VEN_NAME';
