// Speed of the virtual-register computations (workers/virtual), inline on one thread:
// expression parsing and vectorised evaluation over 1M values (against a per-element tree
// walk, the alternative it replaced), a year of 15-minute baselines in Europe/Oslo, and a
// year of 15-minute running totals with a daily local reset.
//   node --import tsx bench/virtualEval.bench.ts
import os from 'node:os';
import { Bench } from 'tinybench';
import { BaselineAlgorithm, baselineLookbackDays, computeBaseline } from '../src/shared/virtual/baselines.ts';
import { evaluateExpression, parseExpression, type Expr } from '../src/shared/virtual/expression.ts';
import { runningTotal } from '../src/shared/virtual/runningTotal.ts';
import { localDayKey } from '../src/shared/virtual/time.ts';

const N = 1_000_000;
const VARS = ['r0', 'r1', 'r2'];
const random = (n: number, scale: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() * scale);
const inputs = [random(N, 100), random(N, 50), random(N, 10)];
const parse = (text: string): Expr => {
  const parsed = parseExpression(text, VARS);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.ast;
};
const simple = parse('r0 - 0.5 * r1');
const complex = parse('max(r0 - 0.5 * r1, 0) + abs(r2 - 5) / 4 - min(r0, r1, r2) * 2');

/** The alternative: walk the tree once per element. */
function perElement(node: Expr, i: number): number {
  switch (node.type) {
    case 'number':
      return node.value;
    case 'variable':
      return inputs[node.index]![i]!;
    case 'negate':
      return -perElement(node.operand, i);
    case 'binary': {
      const a = perElement(node.left, i);
      const b = perElement(node.right, i);
      return node.operator === '+' ? a + b : node.operator === '-' ? a - b : node.operator === '*' ? a * b : b === 0 ? NaN : a / b;
    }
    case 'call': {
      const args = node.args.map((arg) => perElement(arg, i));
      return node.name === 'abs' ? Math.abs(args[0]!) : node.name === 'min' ? Math.min(...args) : Math.max(...args);
    }
  }
}

// A year of 15-minute readings in Oslo, plus the lookback the engine would load.
const ZONE = 'Europe/Oslo';
const STEP = 900_000;
const yearStart = Date.parse('2024-01-01T00:00:00+01:00');
const yearEnd = Date.parse('2025-01-01T00:00:00+01:00');
const lookback = baselineLookbackDays(BaselineAlgorithm.Average10Of10Multiplicative) * 86_400_000;
const historyTimestamps = Float64Array.from({ length: (yearEnd - yearStart + lookback) / STEP }, (_, i) => yearStart - lookback + i * STEP);
const historyValues = Float64Array.from(historyTimestamps, (t) => 5 + 3 * Math.sin((t / 86_400_000) * 2 * Math.PI) + Math.random());
const targets = historyTimestamps.filter((t) => t >= yearStart);
const yearValues = historyValues.slice(historyValues.length - targets.length);
const baselineInput = { targetTimestamps: targets, resolutionSeconds: 900, timeZone: ZONE, history: { timestamps: historyTimestamps, values: historyValues } };

// First calls in a fresh worker resolve each local day through Intl (then cached per zone).
const cold: Record<string, number> = {};
for (const algorithm of [BaselineAlgorithm.Average10Of10Multiplicative, BaselineAlgorithm.High4Of5]) {
  const start = performance.now();
  computeBaseline(algorithm, baselineInput);
  cold[`${BaselineAlgorithm[algorithm]}, first call (cold day cache)`] = +(performance.now() - start).toFixed(1);
}

const bench = new Bench({ time: 2000, warmupTime: 300 });
bench
  .add('parse "max(r0 - 0.5 * r1, 0) + abs(r2 - 5) / 4 - min(r0, r1, r2) * 2"', () => {
    parseExpression('max(r0 - 0.5 * r1, 0) + abs(r2 - 5) / 4 - min(r0, r1, r2) * 2', VARS);
  })
  .add('evaluate r0 - 0.5 * r1, 1M values (vectorised)', () => {
    evaluateExpression(simple, inputs, N);
  })
  .add('evaluate r0 - 0.5 * r1, 1M values (per-element tree walk)', () => {
    const out = new Float64Array(N);
    for (let i = 0; i < N; i++) out[i] = perElement(simple, i);
  })
  .add('evaluate 12-node expression, 1M values (vectorised)', () => {
    evaluateExpression(complex, inputs, N);
  })
  .add('evaluate 12-node expression, 1M values (per-element tree walk)', () => {
    const out = new Float64Array(N);
    for (let i = 0; i < N; i++) out[i] = perElement(complex, i);
  })
  .add('baseline PreviousDay, a year of 15-min (35,136 values)', () => {
    computeBaseline(BaselineAlgorithm.PreviousDay, baselineInput);
  })
  .add('baseline High4Of5, a year of 15-min', () => {
    computeBaseline(BaselineAlgorithm.High4Of5, baselineInput);
  })
  .add('baseline Average10Of10Multiplicative, a year of 15-min', () => {
    computeBaseline(BaselineAlgorithm.Average10Of10Multiplicative, baselineInput);
  })
  .add('baseline PjmCustomerBaseline, a year of 15-min', () => {
    computeBaseline(BaselineAlgorithm.PjmCustomerBaseline, baselineInput);
  })
  .add('baseline Caiso10In10, a year of 15-min', () => {
    computeBaseline(BaselineAlgorithm.Caiso10In10, baselineInput);
  })
  .add('running total, daily 06:00 Oslo reset, a year of 15-min', () => {
    runningTotal(targets, yearValues, { resetTimeOfDay: '06:00:00', timeZone: ZONE });
  })
  .add('localDayKey (one Intl call)', () => {
    localDayKey(yearStart + Math.floor(Math.random() * 1e10), ZONE);
  });

await bench.run();
console.log(`${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}`);
console.log('ms:', cold);
console.table(
  bench.tasks.map((t) => {
    const r = t.result as unknown as { latency: { mean: number; p99: number }; throughput: { mean: number } };
    return { task: t.name, 'mean ms': +r.latency.mean.toFixed(3), 'p99 ms': +r.latency.p99.toFixed(3), 'ops/s': +r.throughput.mean.toFixed(1) };
  }),
);
