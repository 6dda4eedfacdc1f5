// Periods in the console are whole UTC days (YYYY-MM-DD), like every timestamp on the wire.

export const DAY_MS = 86_400_000;

export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function parseDay(text: string | null | undefined): number | undefined {
  if (!text || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** [start, end) as ISO 8601 UTC: from the first day's midnight to the midnight after the last day. */
export function periodOf(from: string, to: string): { start: string; end: string } | undefined {
  const a = parseDay(from);
  const b = parseDay(to);
  if (a === undefined || b === undefined || b < a) return undefined;
  return { start: new Date(a).toISOString(), end: new Date(b + DAY_MS).toISOString() };
}

export function formatInstant(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/\.000Z$|Z$/, ' UTC');
}
