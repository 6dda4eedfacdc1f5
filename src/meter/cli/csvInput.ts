// The import's input file as a stream of byte chunks, gunzipped on the fly when the name ends in
// `.gz` or the file starts with the gzip magic bytes. Nothing is read ahead beyond the streams'
// own buffers: the consumer's pace (it awaits each batch's write) pauses the file.
import fs from 'node:fs';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';

const READ_CHUNK = 1 << 20;
const GUNZIP_CHUNK = 256 << 10;

export interface CsvInput {
  path: string;
  gzip: boolean;
  /** Size of the file on disk (compressed size for gzip). */
  totalBytes: number;
  /** Bytes of the file consumed so far. */
  bytesRead(): number;
  chunks: AsyncIterable<Buffer>;
  close(): void;
}

async function startsWithGzipMagic(path: string): Promise<boolean> {
  const handle = await fs.promises.open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Opens the file; throws (ENOENT, EACCES, EISDIR…) when it cannot be read. */
export async function openCsvInput(path: string): Promise<CsvInput> {
  const stat = await fs.promises.stat(path);
  if (!stat.isFile()) throw new Error(`${path} is not a regular file`);
  const gzip = path.toLowerCase().endsWith('.gz') || (await startsWithGzipMagic(path));
  const file = fs.createReadStream(path, { highWaterMark: READ_CHUNK });
  let chunks: AsyncIterable<Buffer> = file;
  if (gzip) {
    const gunzip = zlib.createGunzip({ chunkSize: GUNZIP_CHUNK });
    // pipeline() destroys both streams on an error of either, and the iteration then throws it.
    pipeline(file, gunzip, () => undefined);
    chunks = gunzip;
  }
  return {
    path,
    gzip,
    totalBytes: stat.size,
    bytesRead: () => file.bytesRead,
    chunks,
    close: () => file.destroy(),
  };
}
