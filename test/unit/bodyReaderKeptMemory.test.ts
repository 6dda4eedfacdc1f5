// Large request bodies are read into kept shared memory (src/http/body.ts): a body is never
// written by a later request's chunks, and a reader released early (an answer before its whole
// body arrived) drops what still comes instead of writing into memory another request now uses.
import { describe, expect, it } from 'vitest';
import { BodyReader, KEPT_BODY_BYTES } from '../../src/http/body.ts';

const LIMIT = 64 * KEPT_BODY_BYTES;
const filled = (size: number, byte: number) => Buffer.alloc(size, byte);
/** A reader of an admitted request (node:http: chunks come once it has started). */
function started(limit: number, declared: number): BodyReader {
  const reader = new BodyReader(limit, declared, undefined, () => undefined);
  void reader.start();
  return reader;
}

describe('BodyReader, kept memory for large bodies', () => {
  it('reads a large body into shared memory, exactly its declared length', async () => {
    const reader = started(LIMIT, KEPT_BODY_BYTES + 10);
    reader.push(filled(KEPT_BODY_BYTES, 1), false, false);
    reader.push(filled(10, 2), true, false);
    const body = await reader.done;
    expect(body.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(body.length).toBe(KEPT_BODY_BYTES + 10);
    expect(body[0]).toBe(1);
    expect(body[KEPT_BODY_BYTES + 9]).toBe(2);
    reader.release();
  });

  it('keeps small bodies in ordinary memory', async () => {
    const reader = started(LIMIT, 3);
    reader.push(Buffer.from('abc'), true, false);
    expect((await reader.done).buffer).toBeInstanceOf(ArrayBuffer);
    reader.release();
  });

  it('a released reader drops later chunks: the memory it gave back is not written', async () => {
    const size = 2 * KEPT_BODY_BYTES;
    const early = started(LIMIT, size);
    early.push(filled(KEPT_BODY_BYTES, 7), false, false);
    // Answered (e.g. 401) before the rest of its body came: released.
    early.release();
    const next = started(LIMIT, size);
    next.push(filled(size, 9), true, false);
    const body = await next.done;
    // The first request's remaining chunk arrives now.
    early.push(filled(KEPT_BODY_BYTES, 7), true, false);
    expect(body.every((b) => b === 9)).toBe(true);
    next.release();
  });

  it('two large bodies read at once get memory of their own', async () => {
    const size = KEPT_BODY_BYTES + 1;
    const a = started(LIMIT, size);
    const b = started(LIMIT, size);
    a.push(filled(size, 3), true, false);
    b.push(filled(size, 4), true, false);
    const [bodyA, bodyB] = await Promise.all([a.done, b.done]);
    expect(bodyA.every((x) => x === 3)).toBe(true);
    expect(bodyB.every((x) => x === 4)).toBe(true);
    a.release();
    b.release();
  });
});
