// Request body reading with a size limit. When the client declares a Content-Length we allocate
// the buffer once and copy each chunk into place; otherwise (chunked uploads) chunks are kept in
// a list and concatenated once at the end. Either way the cost is linear in the body size.
import type { HttpResponse } from 'uWebSockets.js';
import { HttpError } from './errors.ts';

export class BodyReader {
  readonly done: Promise<Buffer>;
  private resolve!: (body: Buffer) => void;
  private reject!: (err: HttpError) => void;
  private buffer: Buffer | undefined;
  private chunks: Buffer[] = [];
  private received = 0;
  private failed = false;
  /** True once the last chunk arrived: the connection can then be reused after an error. */
  complete = false;

  constructor(res: HttpResponse, private readonly limit: number, declaredLength: number | undefined) {
    this.done = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Nobody may be awaiting yet (the request is still being admitted); the rejection is
    // observed later through `done`.
    this.done.catch(() => undefined);
    if (declaredLength !== undefined) this.buffer = Buffer.allocUnsafe(declaredLength);
    res.onData((chunk, isLast) => this.onChunk(chunk, isLast));
  }

  private onChunk(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.failed) return;
    const size = chunk.byteLength;
    this.received += size;
    if (this.received > this.limit) return this.fail(new HttpError('payload_too_large', `The request body exceeds the limit of ${this.limit} bytes`));
    if (this.buffer) {
      if (this.received > this.buffer.length) return this.fail(new HttpError('malformed_request', 'The request body is longer than its Content-Length'));
      // The ArrayBuffer is only valid during this callback: copy it now.
      this.buffer.set(new Uint8Array(chunk), this.received - size);
    } else if (size > 0) {
      this.chunks.push(Buffer.from(new Uint8Array(chunk)));
    }
    if (!isLast) return;
    this.complete = true;
    if (this.buffer) {
      this.resolve(this.received === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.received));
    } else {
      this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received));
    }
    this.chunks = [];
  }

  private fail(err: HttpError): void {
    this.failed = true;
    this.buffer = undefined;
    this.chunks = [];
    this.reject(err);
  }
}
