// Request body reading with a size limit, fed by either HTTP server (uWebSockets.js onData or
// node:http's data events). When the client declares a Content-Length we allocate the buffer once
// and copy each chunk into place; otherwise (chunked uploads) chunks are kept in a list and
// concatenated once at the end. Either way the cost is linear in the body size. The declared
// length was checked before (parseContentLength: digits only, at most the body limit).
//
// A body of KEPT_BODY_BYTES or more is read into shared memory kept from one request to the next
// (SharedBuffers): writing a 66 MiB body into fresh memory took 470–500 ms on this platform's
// machines (a page fault per 4 KiB), into kept memory 56–65 ms (docs/benchmarks.md,
// QuestDB). Shared, so the readings workers read it in place, with no copy or transfer. The
// front gives the memory back with release() once the request has been answered, when the
// handler is done with its body (a handler must not keep the body past its answer).
import { SharedBuffers } from '../store/timeseries/sharedBuffers.ts';
import { HttpError } from './errors.ts';

/** Bodies from this size on are read into kept memory. */
export const KEPT_BODY_BYTES = 1 << 20;
/** Large bodies read at once whose memory is kept for the next ones. */
const keptBodies = new SharedBuffers(2);

export class BodyReader {
  readonly done: Promise<Buffer>;
  private resolve!: (body: Buffer) => void;
  private reject!: (err: HttpError) => void;
  private buffer: Buffer | undefined;
  /** The kept memory the buffer is a view of, until release(). */
  private kept: Uint8Array | undefined;
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
      if (declaredLength >= KEPT_BODY_BYTES) {
        this.kept = keptBodies.take(declaredLength);
        this.buffer = Buffer.from(this.kept.buffer, this.kept.byteOffset, declaredLength);
      } else {
        this.buffer = Buffer.allocUnsafe(declaredLength);
      }
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

  /** The request was answered: its handler is done with the body, and kept memory goes back for
   * the next large body. Chunks arriving later (an answer before the whole body) are dropped. */
  release(): void {
    this.failed = true;
    this.buffer = undefined;
    this.chunks = [];
    const kept = this.kept;
    this.kept = undefined;
    if (kept) keptBodies.give(kept);
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
