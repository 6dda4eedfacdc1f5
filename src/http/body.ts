// Request bodies: each route's limit, a budget of body bytes held at once, and the reader both
// fronts feed (uWebSockets.js onData or node:http's data events).
//
// Nothing is read or allocated for a request before it is admitted (token, rights, quotas:
// Router#admit), except what the socket already delivered: node:http leaves the body in the
// socket until the reader starts (the request stream is not read, so the kernel's buffer fills
// and TCP stops the sender); uWebSockets.js is paused, and the bytes of the packet that carried
// the headers (at most its receive buffer, 512 KiB) are kept as chunks. A declared Content-Length
// above the route's limit is refused (413) before admission; once admitted, a declared length is
// allocated at once and each chunk copied into place, and a chunked upload is kept as a list of
// chunks concatenated once at the end. Every chunk is counted against the limit as it arrives.
//
// Routes with a bounded limit (everything but reading batches) share a budget of body bytes held
// at once (BODY_BUDGET_BYTES): a body that does not fit is refused with 503 and Retry-After rather
// than read, so many concurrent maximum-size requests cannot exhaust memory (docs/security.md,
// "Request bodies", has the figures). Reading batches (`large`) are outside the budget: they are
// authenticated and rate limited per client before their body is read, and parsed by a streaming
// byte parser that holds no more than the body.
//
// A body of KEPT_BODY_BYTES or more is read into shared memory kept from one request to the next
// (SharedBuffers): writing a 66 MiB body into fresh memory took 470–500 ms on this platform's
// machines (a page fault per 4 KiB), into kept memory 56–65 ms (docs/benchmarks.md,
// QuestDB). Shared, so the readings workers read it in place, with no copy or transfer. The
// front gives the memory back with release() once the request has been answered, when the
// handler is done with its body (a handler must not keep the body past its answer).
import { SharedBuffers } from '../store/timeseries/sharedBuffers.ts';
import { HttpError } from './errors.ts';
import type { BodyKind } from './types.ts';

/** Form bodies (the token endpoints) and bodies sent to routes that read none. */
export const SMALL_BODY_BYTES = 16 * 1024;
/** JSON objects of the platform API (orders, meters, clients, admin objects). */
export const JSON_BODY_BYTES = 1024 * 1024;
/** OpenADR objects: events and reports with many intervals. */
export const DOCUMENT_BODY_BYTES = 4 * 1024 * 1024;

/** Bytes of a route's limit per JSON value a body may hold (jsonValuesExceed): one value per 8
 * bytes admits the densest real documents (an OpenADR report's intervals take ~10 bytes per value)
 * and refuses `[0,0,…]` and `[{},{},…]`, which cost 4× and 20× their size to parse. */
export const BYTES_PER_JSON_VALUE = 8;

/** Whether a JSON text holds more than `max` values, counted as the `{`, `[` and `,` outside
 * strings (one per object, array, and member or element after the first). Run before JSON.parse,
 * whose memory grows with the number of values rather than the bytes. Hand-written byte loop:
 * 9–25 ms for 4 MiB on this platform's machines, beside 160–380 ms for JSON.parse of the same. */
export function jsonValuesExceed(body: Uint8Array, max: number): boolean {
  if (body.length <= max) return false;
  let count = 0;
  let inString = false;
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i]!;
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c || c === 0x5b || c === 0x7b) {
      count += 1;
      if (count > max) return true;
    }
  }
  return false;
}

/** The limit of a route that declares none. */
export function defaultBodyLimit(kind: BodyKind): number {
  return kind === 'json' || kind === 'raw' ? JSON_BODY_BYTES : SMALL_BODY_BYTES;
}

/** Bodies from this size on are read into kept memory. */
export const KEPT_BODY_BYTES = 1 << 20;
/** Large bodies read at once whose memory is kept for the next ones. */
const keptBodies = new SharedBuffers(2);

export function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `The request body exceeds this route's limit of ${limit} bytes`);
}

function busy(): HttpError {
  return new HttpError('service_unavailable', 'The server holds as many request bodies as it may at once; retry in a moment', { headers: { 'Retry-After': '1' } });
}

/** Body bytes held at once by requests of bounded routes. */
export class BodyBudget {
  private used = 0;

  constructor(readonly bytes: number) {}

  get held(): number {
    return this.used;
  }

  take(bytes: number): boolean {
    if (this.used + bytes > this.bytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

export class BodyReader {
  readonly done: Promise<Buffer>;
  private resolve!: (body: Buffer) => void;
  private reject!: (err: HttpError) => void;
  private buffer: Buffer | undefined;
  /** The kept memory the buffer is a view of, until release(). */
  private kept: Uint8Array | undefined;
  private chunks: Buffer[] = [];
  private received = 0;
  /** Bytes taken from the budget, given back once. */
  private reserved = 0;
  private state: 'waiting' | 'reading' | 'dropping' | 'read' | 'failed' = 'waiting';
  private begun = false;
  /** The last chunk arrived (before the start, while reading, or while dropping). */
  private arrived = false;
  /** The body can no longer be read to its end (connection gone, too long, malformed). */
  private broken = false;
  private dropped: ((ok: boolean) => void) | undefined;

  /**
   * @param limit the route's limit; the declared length was checked against it before.
   * @param budget shared by bounded routes; undefined for reading batches.
   * @param begin lets the body flow (attach listeners, resume the socket); called once, by start()
   *   (also when the whole body came before it) or discard().
   */
  constructor(
    private readonly limit: number,
    readonly declaredLength: number | undefined,
    private readonly budget: BodyBudget | undefined,
    private readonly begin: () => void,
  ) {
    this.done = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Nobody may be awaiting yet (the request is still being admitted); the rejection is
    // observed later through `done`.
    this.done.catch(() => undefined);
    if (declaredLength !== undefined && (!Number.isSafeInteger(declaredLength) || declaredLength < 0 || declaredLength > limit)) {
      throw new RangeError(`BodyReader: declared length ${declaredLength} outside 0..${limit}`);
    }
  }

  /** The whole body arrived (read, or dropped by discard()): the connection can be reused. */
  get complete(): boolean {
    return this.arrived && !this.broken;
  }

  /** The request was admitted: take the body's bytes from the budget, allocate, and read. */
  start(): Promise<Buffer> {
    if (this.state !== 'waiting') return this.done;
    this.state = 'reading';
    const declared = this.declaredLength;
    if (!this.reserve(declared ?? this.received)) {
      // Refused for now, not broken: discard() can still read the rest and keep the connection.
      this.settleFailed(busy());
      return this.done;
    }
    if (declared !== undefined) {
      if (declared >= KEPT_BODY_BYTES) {
        this.kept = keptBodies.take(declared);
        this.buffer = Buffer.from(this.kept.buffer, this.kept.byteOffset, declared);
      } else {
        this.buffer = Buffer.allocUnsafe(declared);
      }
      // What arrived before the start (uWebSockets.js): push() held it to the declared length.
      let at = 0;
      for (const chunk of this.chunks) {
        this.buffer.set(chunk, at);
        at += chunk.length;
      }
      this.chunks = [];
    }
    if (this.arrived) this.finish();
    // Also after the last chunk: a paused uWebSockets.js socket must read the next request.
    this.flow();
    return this.done;
  }

  /** One chunk; `copy` when the bytes are only valid during the call (uWebSockets.js). */
  push(chunk: Uint8Array, isLast: boolean, copy: boolean): void {
    if (this.arrived || this.broken || (this.state !== 'waiting' && this.state !== 'reading' && this.state !== 'dropping')) return;
    const size = chunk.byteLength;
    this.received += size;
    if (this.received > this.limit) return this.fail(tooLarge(this.limit));
    if (this.declaredLength !== undefined && this.received > this.declaredLength) return this.fail(new HttpError('malformed_request', 'The request body is longer than its Content-Length'));
    if (this.state === 'reading' && this.buffer) {
      this.buffer.set(chunk, this.received - size);
    } else if (this.state !== 'dropping' && size > 0) {
      // Chunked uploads are held chunk by chunk, each taken from the budget as it comes.
      if (this.state === 'reading' && !this.reserve(size)) return this.fail(busy());
      this.chunks.push(copy ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    if (isLast) this.finish();
  }

  /** The body ended (node:http 'end' after the last chunk). */
  finish(): void {
    if (this.broken) return;
    if (!this.arrived) {
      if (this.declaredLength !== undefined && this.received < this.declaredLength) return this.fail(new HttpError('malformed_request', 'The request body is shorter than its Content-Length'));
      this.arrived = true;
    }
    // Arrived before the start (uWebSockets.js): start() calls this again to resolve.
    if (this.state === 'dropping') {
      this.dropped?.(true);
    } else if (this.state === 'reading') {
      this.state = 'read';
      this.resolve(this.buffer ?? (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received)));
      this.chunks = [];
    }
  }

  /** The request is answered without its body (refused before or instead of reading it): the rest
   * is read and dropped, holding nothing, so the client can finish its upload, read the answer
   * and keep the connection. Resolves whether the whole body arrived. */
  discard(): Promise<boolean> {
    if (this.arrived) return Promise.resolve(!this.broken);
    if (this.broken) return Promise.resolve(false);
    this.state = 'dropping';
    this.drop();
    return new Promise<boolean>((resolve) => {
      this.dropped = resolve;
      this.flow();
    });
  }

  /** The request was answered: its handler is done with the body, and kept memory goes back for
   * the next large body. Chunks arriving later (an answer before the whole body) are dropped. */
  release(): void {
    if (this.state !== 'dropping') this.state = 'failed';
    this.drop();
    // The whole body came before the request was refused (it never started): a paused
    // uWebSockets.js socket must still read the next request on the connection.
    if (this.arrived) this.flow();
  }

  /** The connection went away or the body could not be read (no effect once it was read). */
  fail(err: HttpError): void {
    if (this.arrived || this.broken) return;
    this.broken = true;
    if (this.state === 'dropping') {
      this.drop();
      this.dropped?.(false);
      return;
    }
    this.settleFailed(err);
  }

  private settleFailed(err: HttpError): void {
    if (this.state === 'failed' || this.state === 'read') return;
    this.state = 'failed';
    this.drop();
    this.reject(err);
  }

  private flow(): void {
    if (this.begun) return;
    this.begun = true;
    this.begin();
  }

  /** Lets go of whatever the body holds: chunks, buffer, budget, kept memory. */
  private drop(): void {
    this.buffer = undefined;
    this.chunks = [];
    if (this.budget && this.reserved > 0) this.budget.give(this.reserved);
    this.reserved = 0;
    const kept = this.kept;
    this.kept = undefined;
    if (kept) keptBodies.give(kept);
  }

  private reserve(bytes: number): boolean {
    if (!this.budget || bytes === 0) return true;
    if (!this.budget.take(bytes)) return false;
    this.reserved += bytes;
    return true;
  }
}
