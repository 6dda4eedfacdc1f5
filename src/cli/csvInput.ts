// The import's input file as byte chunks, gunzipped on the fly when the name ends in `.gz` or the
// file starts with the gzip magic bytes. Nothing is read ahead beyond one chunk (and the gzip
// streams' own buffers): the consumer's pace (it awaits each batch's write) pauses the file.
import fs from 'node:fs';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';

const READ_CHUNK = 1 << 20;
const GZIP_READ_CHUNK = 256 << 10;
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

/** Plain files are read into one reused buffer: no allocation per chunk (the consumer copies). */
async function* readInto(handle: fs.promises.FileHandle, counter: { bytes: number }): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  try {
    while (true) {
      const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, null);
      if (bytesRead === 0) return;
      counter.bytes += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** Opens the file; throws (ENOENT, EACCES, EISDIR…) when it cannot be read. */
export async function openCsvInput(path: string): Promise<CsvInput> {
  const stat = await fs.promises.stat(path);
  if (!stat.isFile()) throw new Error(`${path} is not a regular file`);
  const gzip = path.toLowerCase().endsWith('.gz') || (await startsWithGzipMagic(path));
  if (!gzip) {
    const handle = await fs.promises.open(path, 'r');
    const counter = { bytes: 0 };
    const chunks = readInto(handle, counter);
    return {
      path,
      gzip,
      totalBytes: stat.size,
      bytesRead: () => counter.bytes,
      chunks,
      close: () => void chunks.return(undefined).catch(() => undefined),
    };
  }
  // zlib may hold on to its input, so compressed chunks are not reused: a plain read stream.
  const file = fs.createReadStream(path, { highWaterMark: GZIP_READ_CHUNK });
  const gunzip = zlib.createGunzip({ chunkSize: GUNZIP_CHUNK });
  // pipeline() destroys both streams on an error of either, and the iteration then throws it.
  pipeline(file, gunzip, () => undefined);
  return {
    path,
    gzip,
    totalBytes: stat.size,
    bytesRead: () => file.bytesRead,
    chunks: gunzip,
    close: () => void gunzip.destroy(),
  };
}
