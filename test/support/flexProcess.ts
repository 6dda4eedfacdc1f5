// Runs the platform as its own process (`node --import tsx src/main.ts`), the way `npm start`
// does, for tests about signals, restarts and crashes.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface FlexProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  output: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

export async function startFlexProcess(env: Record<string, string>, timeoutMs = 60_000, args: string[] = []): Promise<FlexProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitedAlready = false;
  void exited.then(() => {
    exitedAlready = true;
    for (const l of listeners) l();
  });

  const waitForOutput = (pattern: RegExp, ms = timeoutMs) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(match[0]);
        } else if (exitedAlready) {
          listeners.delete(check);
          clearTimeout(timer);
          reject(new Error(`process exited before printing ${pattern}:\n${output}`));
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${pattern}:\n${output}`));
      }, ms);
      listeners.add(check);
      check();
    });

  await waitForOutput(/"msg":"flex is listening"/);
  await waitForOutput(/ admin token: .*\n(.*\n)*\n/);
  const line = output.split('\n').find((l) => l.includes('"flex is listening"'))!;
  const port = JSON.parse(line).port as number;
  return { child, port, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited, waitForOutput };
}
