// The import's reject file: a CSV of `line,reason,record` (the physical line number where the
// rejected record starts, why it was refused, the record exactly as it was in the file), in line
// order. Created (or truncated) when the import starts, so a failure to write it stops the import
// before anything is stored; removed at the end when nothing was rejected, so a reject file
// always belongs to the last run.
import { once } from 'node:events';
import fs from 'node:fs';
import { csvField } from './csv.ts';
import type { Reject } from './importBatch.ts';

export const REJECT_HEADER = 'line,reason,record';

export class RejectFile {
  count = 0;

  private constructor(
    readonly path: string,
    private readonly stream: fs.WriteStream,
  ) {}

  static async open(path: string): Promise<RejectFile> {
    const stream = fs.createWriteStream(path);
    await Promise.race([once(stream, 'open'), once(stream, 'error').then(([err]) => Promise.reject(err as Error))]);
    stream.write(`${REJECT_HEADER}\n`);
    return new RejectFile(path, stream);
  }

  /** Appends rejects; waits while the disk is behind so rejects never pile up in memory. */
  async append(rejects: readonly Reject[]): Promise<void> {
    if (rejects.length === 0) return;
    let text = '';
    for (const r of rejects) text += `${r.line},${csvField(r.reason)},${csvField(r.record)}\n`;
    this.count += rejects.length;
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  /** Flushes and closes; deletes the file when it holds no reject. */
  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, 'close');
    if (this.count === 0) fs.rmSync(this.path, { force: true });
  }
}
