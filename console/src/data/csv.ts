// CSV (RFC 4180) of what the chart shows: one row per timestamp, one column per visible series;
// an empty cell where a series has no reading. Numbers are written as JSON writes them, so a
// value read back equals the API's exactly.
import { visibleRows, type Aligned } from './series.ts';

function field(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(aligned: Aligned, labels: readonly string[], min: number, max: number, shown: readonly number[]): string {
  const lines = [['timestamp', ...shown.map((s) => labels[s]!)].map(field).join(',')];
  for (const i of visibleRows(aligned, min, max, shown)) {
    const cells = [new Date(aligned.x[i]! * 1000).toISOString()];
    for (const s of shown) {
      const v = aligned.ys[s]![i];
      cells.push(typeof v === 'number' ? String(v) : '');
    }
    lines.push(cells.join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
