// Request body reading with a size limit, fed by either HTTP server (uWebSockets.js onData or
// node:http's data events). When the client declares a Content-Length we allocate the buffer once
// and copy each chunk into place; otherwise (chunked uploads) chunks are kept in a list and
// concatenated once at the end. Either way the cost is linear in the body size. The declared
// length was checked before (parseContentLength: digits only, at most the body limit).
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

  constructor(private readonly limit: number, declaredLength: number | undefined) {
    this.done = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Nobody may be awaiting yet (the request is still being admitted); the rejection is
    // observed later through `done`.
    this.done.catch(() => undefined);
    if (declaredLength !== undefined) {
      if (!Number.isSafeInteger(declaredLength) || declaredLength < 0 || declaredLength > limit) {
        throw new RangeError(`BodyReader: declared length ${declaredLength} outside 0..${limit}`);
      }
      this.buffer = Buffer.allocUnsafe(declaredLength);
    }
  }

  /** One chunk; `copy` when the bytes are only valid during the call (uWebSockets.js). */
  push(chunk: Uint8Array, isLast: boolean, copy: boolean): void {
    if (this.failed || this.complete) return;
    const size = chunk.byteLength;
    this.received += size;
    if (this.received > this.limit) return this.fail(new HttpError('payload_too_large', `The request body exceeds the limit of ${this.limit} bytes`));
    if (this.buffer) {
      if (this.received > this.buffer.length) return this.fail(new HttpError('malformed_request', 'The request body is longer than its Content-Length'));
      this.buffer.set(chunk, this.received - size);
    } else if (size > 0) {
      this.chunks.push(copy ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    if (isLast) this.finish();
  }

  /** The body ended (node:http 'end' after the last chunk). */
  finish(): void {
    if (this.failed || this.complete) return;
    this.complete = true;
    if (this.buffer) {
      if (this.received < this.buffer.length) return this.fail(new HttpError('malformed_request', 'The request body is shorter than its Content-Length'));
      this.resolve(this.buffer);
    } else {
      this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received));
    }
    this.chunks = [];
  }

  /** The connection went away or the body could not be read. */
  fail(err: HttpError): void {
    if (this.failed) return;
    this.failed = true;
    this.buffer = undefined;
    this.chunks = [];
    this.reject(err);
  }
}
