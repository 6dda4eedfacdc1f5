// Readings of several registers → one x axis and one y array per register, the shape uPlot
// draws. Gaps stay gaps: where a register's next reading starts after the previous one ends
// (timestamp > periodTo), a null is placed at that periodTo, and uPlot breaks the line there
// (it never interpolates across null). Where a register simply has no point at an x that another
// register has, the value is undefined, which uPlot steps over (alignment, not missing data).
import type { RegisterReadings } from '../api/types.ts';

export type Value = number | null | undefined;

export interface Aligned {
  /** Seconds since the epoch (uPlot's unit), ascending, unique. */
  x: number[];
  /** One array per input series, same length as x. */
  ys: Value[][];
}

interface Points {
  xs: Float64Array;
  ys: (number | null)[];
}

/** One register's points in seconds, with a null at the end of each gap. */
function pointsOf(readings: RegisterReadings['readings']): Points {
  const n = readings.length;
  const xs: number[] = [];
  const ys: (number | null)[] = [];
  let prevEnd = -Infinity;
  for (let i = 0; i < n; i += 1) {
    const r = readings[i]!;
    const start = Date.parse(r.timestamp) / 1000;
    if (start > prevEnd && i > 0) {
      xs.push(prevEnd);
      ys.push(null);
    }
    xs.push(start);
    ys.push(r.value);
    prevEnd = Date.parse(r.periodTo) / 1000;
  }
  return { xs: Float64Array.from(xs), ys };
}

/** Aligns the readings of each series on the union of their x values. */
export function alignReadings(series: readonly RegisterReadings['readings'][]): Aligned {
  const points = series.map(pointsOf);
  if (points.length === 1) return { x: Array.from(points[0]!.xs), ys: [points[0]!.ys] };
  let total = 0;
  for (const p of points) total += p.xs.length;
  const all = new Float64Array(total);
  let at = 0;
  for (const p of points) {
    all.set(p.xs, at);
    at += p.xs.length;
  }
  all.sort();
  const x: number[] = [];
  for (let i = 0; i < all.length; i += 1) if (i === 0 || all[i] !== all[i - 1]) x.push(all[i]!);
  const ys = points.map((p) => {
    const y: Value[] = new Array(x.length);
    let j = 0;
    for (let i = 0; i < x.length && j < p.xs.length; i += 1) {
      if (x[i] === p.xs[j]) {
        y[i] = p.ys[j];
        j += 1;
      }
    }
    return y;
  });
  return { x, ys };
}

/** The rows between two x bounds (inclusive) in which at least one of the chosen series has a
 * value: what the chart shows, and so what the table and the CSV hold. */
export function visibleRows(aligned: Aligned, min: number, max: number, shown: readonly number[]): number[] {
  const rows: number[] = [];
  for (let i = 0; i < aligned.x.length; i += 1) {
    const t = aligned.x[i]!;
    if (t < min || t > max) continue;
    if (shown.some((s) => typeof aligned.ys[s]![i] === 'number')) rows.push(i);
  }
  return rows;
}
