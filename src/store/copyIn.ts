// COPY … FROM STDIN of bytes already encoded (binary COPY rows), shared by the PostgreSQL
// time-series store (register-day blocks) and the QuestDB store's pending-batch journal.
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from './database.ts';

/** Runs `sql` (a COPY … FROM STDIN) on `client` with `pieces` as its data, in order, each sent as
 * CopyData messages of at most `messageBytes` bytes; resolves once PostgreSQL has taken it all. */
export async function copyIn(client: PoolClient, sql: string, pieces: readonly Uint8Array[], messageBytes: number): Promise<void> {
  const stream = client.query(copyFrom(sql));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    let piece = 0;
    let at = 0;
    const pump = () => {
      while (piece < pieces.length) {
        const p = pieces[piece]!;
        const chunk = Buffer.from(p.buffer, p.byteOffset + at, Math.min(messageBytes, p.length - at));
        at += chunk.length;
        if (at >= p.length) {
          piece += 1;
          at = 0;
        }
        if (!stream.write(chunk)) return void stream.once('drain', pump);
      }
      stream.end();
    };
    pump();
  });
}
