// Runs a command-line tool of the repository the way `npm run import|export` does
// (`node --import tsx src/cli/…`), as a child process, and collects its output.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `built`: the package's bin as built into dist/ (`npm run build`), run by plain node, no tsx. */
export function runCli(script: 'importCsv' | 'exportCsv', args: string[], env: Record<string, string>, timeoutMs = 60_000, built = false): Promise<CliResult> {
  const { LOG_LEVEL: _ignored, ...inherited } = process.env;
  const command = built ? [path.join(ROOT, `dist/src/cli/${script}.js`)] : ['--import', 'tsx', `src/cli/${script}.ts`];
  const child = spawn(process.execPath, [...command, ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A number from the import's summary (`  rows stored: 12`). */
export function summaryValue(stdout: string, label: string): number {
  const match = new RegExp(`^  ${label}: ([\\d.]+)`, 'm').exec(stdout);
  if (!match) throw new Error(`no "${label}" in the summary:\n${stdout}`);
  return Number(match[1]);
}
