// Reading batches for POST /api/readings, written as JSON text directly.
import type { SeriesData } from './profiles.ts';

/** Readings of several meters as one POST /api/readings body, written as text directly (a year
 * of a few dozen registers is ~1M readings: building objects for JSON.stringify would double the
 * time and the memory). */
export function readingsBody(meters: { externalId: string; registers: { externalId: string; data: SeriesData }[] }[]): { body: string; readings: number } {
  const parts: string[] = ['{"meters":['];
  let readings = 0;
  meters.forEach((meter, m) => {
    parts.push(`${m ? ',' : ''}{"id":${JSON.stringify(meter.externalId)},"registers":[`);
    meter.registers.forEach((register, r) => {
      const { start, step, values } = register.data;
      const tail = `,"resolution":${step / 1000}}`;
      const chunk: string[] = [];
      for (let i = 0; i < values.length; i += 1) {
        const v = values[i]!;
        if (Number.isNaN(v)) continue;
        chunk.push(`{"timestamp":"${new Date(start + i * step).toISOString()}","value":${v}${tail}`);
      }
      readings += chunk.length;
      parts.push(`${r ? ',' : ''}{"id":${JSON.stringify(register.externalId)},"values":[${chunk.join(',')}]}`);
    });
    parts.push(']}');
  });
  parts.push(']}');
  return { body: parts.join(''), readings };
}
