// The ILP-over-HTTP sender configuration of the QuestDB store, and the line-protocol version.
//
// @questdb/nodejs-client's `protocol_version=auto` reads `config["line.proto.support.versions"]`
// from the server's /settings and throws a TypeError when that is missing: QuestDB 7.4 answers
// /settings with `{}`. So the version is ours to settle, once at connect: the configured one
// (QUESTDB_ILP_PROTOCOL_VERSION 1, 2 or 3), or with `auto` the highest the server lists (and
// this client speaks), or version 1 — which every QuestDB with ILP over HTTP accepts — when the
// server lists none or /settings cannot be read. Never a crash over it.
import type { Logger } from 'pino';

export const ILP_PROTOCOL_VERSIONS = ['auto', '1', '2', '3'] as const;
export type IlpProtocolSetting = (typeof ILP_PROTOCOL_VERSIONS)[number];
export type IlpProtocolVersion = Exclude<IlpProtocolSetting, 'auto'>;

const SETTINGS_TIMEOUT_MS = 5_000;
const SUPPORTED_KEY = 'line.proto.support.versions';

/** The versions a /settings answer lists: QuestDB 8+ nests them under `config`; 7.4 lists none. */
export function listedVersions(settings: unknown): IlpProtocolVersion[] {
  const object = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  const root = object(settings);
  const listed = object(root?.config)?.[SUPPORTED_KEY] ?? root?.[SUPPORTED_KEY];
  if (!Array.isArray(listed)) return [];
  return listed.map(String).filter((v): v is IlpProtocolVersion => v === '1' || v === '2' || v === '3');
}

/** The version to send with: the configured one, or the server's highest, or 1. */
export async function ilpProtocolVersion(httpUrl: string, setting: IlpProtocolSetting, log: Logger): Promise<IlpProtocolVersion> {
  if (setting !== 'auto') return setting;
  const url = new URL('/settings', httpUrl);
  const headers: Record<string, string> = {};
  if (url.username) headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  url.username = '';
  url.password = '';
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(SETTINGS_TIMEOUT_MS) });
    const versions = res.ok ? listedVersions(await res.json()) : [];
    const best = versions.sort().at(-1);
    if (best) return best;
    log.info({ status: res.status }, 'QuestDB lists no ILP protocol versions in /settings: using version 1');
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'QuestDB /settings could not be read: using ILP protocol version 1');
  }
  return '1';
}

/** A @questdb/nodejs-client configuration string: one HTTP request per flush (one QuestDB
 * transaction), buffers sized for large batches. */
export function senderConfig(httpUrl: string, version: IlpProtocolVersion): string {
  const url = new URL(httpUrl);
  // A `;` inside a value is written `;;` in a configuration string.
  const value = (text: string) => decodeURIComponent(text).replaceAll(';', ';;');
  const auth = url.username ? `username=${value(url.username)};password=${value(url.password)};` : '';
  return `${url.protocol.replace(':', '')}::addr=${url.host};${auth}protocol_version=${version};auto_flush=off;init_buf_size=1048576;max_buf_size=1073741824;request_timeout=60000;retry_timeout=10000;`;
}
