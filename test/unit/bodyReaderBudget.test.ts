// Request bodies (src/http/body.ts): nothing is allocated before the request is admitted, chunks
// that came early (uWebSockets.js delivers the packet that carried the headers) are kept and
// counted, every chunk is held to the route's limit, and bounded routes share one budget of bytes
// held at once: a body that does not fit is refused (503), and what a reader held goes back.
import { describe, expect, it } from 'vitest';
import { BodyBudget, BodyReader } from '../../src/http/body.ts';
import type { HttpError } from '../../src/http/errors.ts';

const refusal = (reader: BodyReader) => reader.done.then(() => undefined, (err: HttpError) => err);

describe('BodyReader before and after admission', () => {
  it('keeps chunks that arrive before the start and reads the rest after', async () => {
    let begun = 0;
    const reader = new BodyReader(100, 6, undefined, () => (begun += 1));
    reader.push(Buffer.from('abc'), false, true);
    expect(begun).toBe(0);
    const body = reader.start();
    expect(begun).toBe(1);
    reader.push(Buffer.from('def'), true, false);
    expect((await body).toString()).toBe('abcdef');
    expect(reader.complete).toBe(true);
  });

  it('a body complete before the start resolves at the start (and the socket is resumed for the next request)', async () => {
    let begun = 0;
    const reader = new BodyReader(100, undefined, undefined, () => (begun += 1));
    reader.push(Buffer.from('ab'), false, true);
    reader.push(Buffer.from('c'), true, true);
    expect((await reader.start()).toString()).toBe('abc');
    expect(begun).toBe(1);
  });

  it('refuses a chunked body past the limit, before and after the start', async () => {
    const early = new BodyReader(4, undefined, undefined, () => undefined);
    early.push(Buffer.from('abcde'), false, true);
    expect((await refusal(early))?.status).toBe(413);
    const late = new BodyReader(4, undefined, undefined, () => undefined);
    void late.start();
    late.push(Buffer.from('abc'), false, false);
    late.push(Buffer.from('de'), false, false);
    expect((await refusal(late))?.status).toBe(413);
  });

  it('refuses a declared length above the limit outright', () => {
    expect(() => new BodyReader(10, 11, undefined, () => undefined)).toThrow(RangeError);
  });
});

describe('the body budget', () => {
  it('takes a declared length at the start, refuses what does not fit with 503, and gives back on release', async () => {
    const budget = new BodyBudget(10);
    const a = new BodyReader(10, 8, budget, () => undefined);
    void a.start();
    expect(budget.held).toBe(8);
    const b = new BodyReader(10, 4, budget, () => undefined);
    void b.start();
    const err = await refusal(b);
    expect(err?.status).toBe(503);
    expect(err?.headers?.['Retry-After']).toBe('1');
    expect(budget.held).toBe(8);
    a.push(Buffer.alloc(8), true, false);
    await a.done;
    a.release();
    expect(budget.held).toBe(0);
  });

  it('takes chunked bodies chunk by chunk and gives everything back when the client goes away', async () => {
    const budget = new BodyBudget(10);
    const reader = new BodyReader(100, undefined, budget, () => undefined);
    reader.push(Buffer.alloc(3), false, true);
    void reader.start();
    expect(budget.held).toBe(3);
    reader.push(Buffer.alloc(5), false, false);
    expect(budget.held).toBe(8);
    reader.push(Buffer.alloc(5), false, false);
    expect((await refusal(reader))?.status).toBe(503);
    expect(budget.held).toBe(0);
    const other = new BodyReader(100, undefined, budget, () => undefined);
    void other.start();
    other.push(Buffer.alloc(6), false, false);
    other.fail({ status: 400 } as HttpError);
    expect(budget.held).toBe(0);
  });
});

describe('discard: answering without the body', () => {
  it('reads the rest and drops it, holding nothing, so the connection can be kept', async () => {
    const budget = new BodyBudget(10);
    let begun = 0;
    const reader = new BodyReader(10, 8, budget, () => (begun += 1));
    reader.push(Buffer.alloc(3), false, true);
    const dropped = reader.discard();
    expect(begun).toBe(1);
    reader.push(Buffer.alloc(5), true, true);
    expect(await dropped).toBe(true);
    expect(reader.complete).toBe(true);
    expect(budget.held).toBe(0);
  });

  it('after a budget refusal, too', async () => {
    const budget = new BodyBudget(4);
    const reader = new BodyReader(10, 8, budget, () => undefined);
    void reader.start();
    expect((await refusal(reader))?.status).toBe(503);
    const dropped = reader.discard();
    reader.push(Buffer.alloc(8), true, false);
    expect(await dropped).toBe(true);
  });

  it('not past the limit, nor once the connection is gone', async () => {
    const chunked = new BodyReader(4, undefined, undefined, () => undefined);
    const tooLong = chunked.discard();
    chunked.push(Buffer.alloc(5), false, false);
    expect(await tooLong).toBe(false);
    expect(chunked.complete).toBe(false);
    const cut = new BodyReader(10, 8, undefined, () => undefined);
    const gone = cut.discard();
    cut.fail({ status: 400 } as HttpError);
    expect(await gone).toBe(false);
  });
});

describe('release', () => {
  it('lets the body flow when the whole of it came before a refusal (the connection goes on)', () => {
    let begun = 0;
    const reader = new BodyReader(10, 3, undefined, () => (begun += 1));
    reader.push(Buffer.from('abc'), true, true);
    expect(reader.complete).toBe(true);
    reader.release();
    expect(begun).toBe(1);
    const cut = new BodyReader(10, 3, undefined, () => (begun += 1));
    cut.push(Buffer.from('a'), false, true);
    cut.release();
    expect(begun).toBe(1);
  });
});
