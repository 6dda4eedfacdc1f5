// Reading V8 CPU profiles (.cpuprofile, from `node --cpu-prof` or the inspector): self time per
// function, the top of which the benchmarks print. Also profiles a piece of code in-process,
// for work that runs in worker threads (Piscina passes its own execArgv, so --cpu-prof does not
// reach them).
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  name: string;
  selfMs: number;
  share: string;
}

/** Self time by function (name + file:line), largest first. */
export function hotFunctions(profile: CpuProfile, top = 15, root?: string): HotFunction[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, k) => {
    const dt = (profile.timeDeltas[k + 1] ?? 0) / 1000;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') return;
    let file = frame.url.replace(/^file:\/\//, '');
    if (root) file = path.relative(root, file);
    // tsx-transpiled files report line 1 for everything: their function names say enough.
    const line = frame.lineNumber > 0 ? `:${frame.lineNumber + 1}` : '';
    const key = frame.url ? `${frame.functionName || '(anonymous)'} ${file}${line}` : frame.functionName;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, selfMs: Math.round(ms), share: `${((ms / total) * 100).toFixed(1)}%` }));
}

/** Busy (non-idle) milliseconds in the profile. */
export function busyMs(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  let ms = 0;
  profile.samples.forEach((id, k) => {
    if (!idle.has(id)) ms += (profile.timeDeltas[k + 1] ?? 0) / 1000;
  });
  return Math.round(ms);
}

export function readProfiles(dir: string): CpuProfile[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile);
}

/** Runs `fn` under the V8 sampling profiler of this thread and returns its profile. */
export async function profileInProcess(fn: () => Promise<void> | void, intervalMicros = 500): Promise<CpuProfile> {
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalMicros });
    await session.post('Profiler.start');
    await fn();
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    return profile;
  } finally {
    session.disconnect();
  }
}
