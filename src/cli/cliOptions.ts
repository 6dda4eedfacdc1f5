// The command-line options flex-import and flex-export share (--progress-interval, remote mode's
// --url and --token, --help) and how their numbers are read.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { remoteOptions, type RemoteOptions } from './remote.ts';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

const SHARED_OPTIONS = {
  'progress-interval': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig;

/** The arguments read with the tool's own options and the shared ones; positionals are left to
 * the tool. Throws on an unknown option (the message is the usage error). */
export function parseToolArgs<O extends OptionsConfig>(argv: string[], options: O) {
  return parseArgs({ args: argv, allowPositionals: true, options: { ...options, ...SHARED_OPTIONS } });
}

export interface SharedOptions {
  /** Between progress lines when stderr is not a terminal. */
  progressIntervalMs: number;
  /** Set in remote mode (--url, or FLEX_URL). */
  remote: RemoteOptions | undefined;
}

/** The shared options' values, or the message for a bad one. */
export function sharedOptions(values: { 'progress-interval'?: string; url?: string; token?: string }): SharedOptions | string {
  const remote = remoteOptions(values.url, values.token);
  if (typeof remote === 'string') return remote;
  return { remote, progressIntervalMs: positiveNumber(values['progress-interval'], 5, '--progress-interval', 86_400, false) * 1000 };
}

/** `text` as a number in (0, max], `fallback` when absent; throws with the option's name otherwise. */
export function positiveNumber(text: string | undefined, fallback: number, name: string, max: number, integer: boolean): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > max || (integer && !Number.isInteger(n))) throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'} up to ${max}, got ${JSON.stringify(text)}`);
  return n;
}
