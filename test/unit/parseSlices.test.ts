// Large bodies parsed in slices on several worker threads at once (parseBodySliced, the QuestDB
// store's parse): whatever the body, the outcome is exactly that of parsing it in one piece —
// the same rows, series and paths when it is valid, the same errors when it is not — also when
// a cut falls somewhere that only looks like a boundary between meters.
import { afterAll, describe, expect, it } from 'vitest';
import { parseBody, parseBodySliced } from '../../src/store/timeseries/parseBody.ts';
import { meterCuts, parseReadingsSlice } from '../../src/shared/readings/parseReadings.ts';
import { WorkerPool } from '../../src/workerPool.ts';

const pool = new WorkerPool(3, 0);
afterAll(() => pool.close());

const value = (i: number) => ({ timestamp: new Date(Date.UTC(2024, 0, 1) + i * 900_000).toISOString(), value: (i % 97) / 8, resolution: 900 });
const meter = (m: number, registers = 3, readings = 5) => ({ id: `M${m}`, registers: Array.from({ length: registers }, (_, r) => ({ id: `R${r}`, values: Array.from({ length: readings }, (_, i) => value(i)) })) });
const body = (meters: unknown[]) => new Uint8Array(Buffer.from(JSON.stringify({ meters })));

/** Both parses of the same bytes, as plain data (typed arrays as arrays). */
async function both(bytes: Uint8Array): Promise<[unknown, unknown]> {
  const plain = (r: object) => JSON.parse(JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)));
  const whole = await parseBody(pool, bytes.slice(), { encoding: 'none', updatedAtMs: 1 });
  const sliced = await parseBodySliced(pool, bytes.slice(), 1, 0);
  return [plain(sliced), plain(whole)];
}

describe('meterCuts', () => {
  it('cuts at the { of a meter, the part after the cut counted in the whole body', () => {
    const bytes = body(Array.from({ length: 9 }, (_, m) => meter(m)));
    const cuts = meterCuts(bytes, 3);
    expect(cuts).toHaveLength(2);
    for (const cut of cuts) expect(Buffer.from(bytes.subarray(cut, cut + 8)).toString()).toBe('{"id":"M');
  });

  it('finds none in a body of one meter', () => {
    expect(meterCuts(body([meter(1, 5, 20)]), 4)).toEqual([]);
  });
});

describe('parseReadingsSlice', () => {
  it('does not accept a slice that ends inside a meter', () => {
    const bytes = body([meter(1), meter(2)]);
    const cut = meterCuts(bytes, 2)[0]!;
    expect(parseReadingsSlice(bytes.subarray(0, cut), true, false).ok).toBe(true);
    expect(parseReadingsSlice(bytes.subarray(0, cut - 10), true, false).ok).toBe(false);
    expect(parseReadingsSlice(bytes.subarray(cut), false, true).ok).toBe(true);
    expect(parseReadingsSlice(bytes.subarray(cut + 1), false, true).ok).toBe(false);
  });
});

describe('parseBodySliced', () => {
  it('encodes the register-day blocks of the one-piece parse, byte for byte (the PostgreSQL store)', async () => {
    const bytes = body(Array.from({ length: 12 }, (_, m) => meter(m, 3, 200)));
    const plain = (r: object) => JSON.parse(JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)));
    const whole = await parseBody(pool, bytes.slice(), { encoding: 'pgBlocks', updatedAtMs: 7 });
    const sliced = await parseBodySliced(pool, bytes.slice(), 7, 0, 'pgBlocks');
    if (!whole.ok || !sliced.ok) throw new Error('refused');
    expect(meterCuts(bytes, 3).length).toBeGreaterThan(0);
    expect(sliced.blocks!.counts.length).toBeGreaterThan(36);
    expect(plain(sliced.blocks!)).toEqual(plain(whole.blocks!));
  });

  it('gives the rows, series and paths of the one-piece parse', async () => {
    const [sliced, whole] = await both(body(Array.from({ length: 12 }, (_, m) => meter(m))));
    expect((whole as { ok: boolean }).ok).toBe(true);
    expect(sliced).toEqual(whole);
  });

  it('counts meters across slices in the paths of its series', async () => {
    const bytes = body(Array.from({ length: 12 }, (_, m) => meter(m)));
    const sliced = await parseBodySliced(pool, bytes, 1, 0);
    if (!sliced.ok) throw new Error('refused');
    expect(sliced.series.at(-1)).toMatchObject({ meterId: 'M11', meterPath: 'meters[11].id', registerPath: 'meters[11].registers[2].id' });
  });

  it('gives the errors of the one-piece parse for a bad value in a later slice', async () => {
    const meters = Array.from({ length: 12 }, (_, m) => meter(m));
    (meters[10]!.registers[1]!.values[3] as { value: unknown }).value = 'x';
    const [sliced, whole] = await both(body(meters));
    expect(whole).toMatchObject({ ok: false, errors: [{ path: 'meters[10].registers[1].values[3].value' }] });
    expect(sliced).toEqual(whole);
  });

  it('merges a series named in two slices as the one-piece parse does (the later reading wins)', async () => {
    const meters = Array.from({ length: 12 }, (_, m) => meter(m));
    const again = meter(0);
    again.registers[0]!.values[2]!.value = 1234.5;
    meters.push(again);
    const [sliced, whole] = await both(body(meters));
    expect(sliced).toEqual(whole);
    expect(JSON.stringify(whole)).toContain('1234.5');
  });

  it('is not fooled by the boundary text inside an id', async () => {
    // The middle of the body falls in the first meter's registers; the first boundary-like text
    // after it is inside that meter's id (its id comes last).
    const first = { registers: meter(0, 4, 20).registers, id: 'A]}]},{B' };
    const bytes = body([first, meter(1, 1, 1)]);
    const [cut] = meterCuts(bytes, 2);
    expect(Buffer.from(bytes.subarray(cut! - 7, cut! + 2)).toString()).toBe('"A]}]},{B');
    const [sliced, whole] = await both(bytes);
    expect((whole as { ok: boolean }).ok).toBe(true);
    expect(sliced).toEqual(whole);
  });

  it('refuses a body with more after its meters exactly as the one-piece parse does', async () => {
    for (const tail of [',"extra":1}', '}]', '} x', ']}']) {
      const text = JSON.stringify({ meters: Array.from({ length: 12 }, (_, m) => meter(m)) });
      const [sliced, whole] = await both(new Uint8Array(Buffer.from(text.slice(0, -1) + tail)));
      expect((whole as { ok: boolean }).ok, tail).toBe(false);
      expect(sliced, tail).toEqual(whole);
    }
  });
});
