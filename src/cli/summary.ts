// The summary both tools end with, on standard error (standard output carries only data): what
// was done, then the same four figures for every run: time, rate, CPU, peak memory.
import { formatBytes } from './progress.ts';

export function summary(title: string, counts: readonly (readonly [string, number | string])[], rows: number, seconds: number): string {
  const { user, system } = process.cpuUsage();
  const lines = [
    title,
    ...counts.map(([label, value]) => `  ${label}: ${value}`),
    `  duration: ${seconds.toFixed(1)} s`,
    `  rows/s: ${Math.round(rows / Math.max(seconds, 1e-3))}`,
    `  CPU: ${((user + system) / 1e6).toFixed(1)} s`,
    `  peak RSS: ${formatBytes(process.resourceUsage().maxRSS * 1024)}`,
  ];
  return `${lines.join('\n')}\n`;
}
