// The compact column codec of register-day blocks: how a day's readings (and the versions they
// superseded) are kept in a few bytes each (docs/meter-data.md "Block encoding"; blocks.ts puts
// them in rows). Meters send regular times, values with few decimals and one recordedAt per
// batch; the codec is built for that and stays exact for anything else:
//
//   columns  u8 kind (DATA or HISTORY), varint n, then
//            recordedAt     runs: varint runs, then per run varint length and the instant (below;
//                           the first from the block's day, the others from the run before)
//            supersededAt   (HISTORY only) runs, the same way
//            resolutions    runs: varint runs, then per run varint length, varint seconds
//            times          (n > 0) varint g, the greatest common divisor of the first time's
//                           offset (ms since the UTC day began) and of the steps, then varint
//                           first offset / g, and (n > 1, g > 0) the steps / g as frames of
//                           reference (below): regular times are a few bytes and a zero-width
//                           frame, a gap costs a bit or two per reading of its frame
//            values         (n > 0) u8 mode: 0–15 decimal with that many digits (every value is
//                           k / 10^mode exactly, bit for bit: zigzag varint k0, then the
//                           differences of consecutive k as frames of reference); XOR: Gorilla's
//                           XOR of consecutive doubles (any double, -0 and subnormals included)
//   frames   of up to FRAME values: zigzag varint minimum, u8 width, then each value minus the
//            minimum in `width` bits, packed least significant bit first.
//   instants whole milliseconds as a varint of twice the zigzag of their difference from a base
//            (a recordedAt days after its day: 5 bytes instead of 8); any other double as varint 1
//            and an f64.
//
// Times are ascending within a block (HISTORY: by time, then recordedAt, so a reading's versions
// are side by side and every step is ≥ 0). Hand-written: it is the hot path of every read and
// write of the PostgreSQL store (measured in docs/benchmarks-readings.md), and no library
// encodes these columns.

export const DATA = 2;
export const HISTORY = 3;
/** Values per frame of reference: wide enough that its 2–3 header bytes are noise, narrow
 * enough that one outlier widens only its frame. */
const FRAME = 128;
const XOR = 0x40;
const MAX_DIGITS = 15;
/** Scaled integers stay below this, so their differences (and zigzag) are exact doubles. */
const MAX_SCALED = 2 ** 50;
const POW10 = Array.from({ length: MAX_DIGITS + 1 }, (_, d) => 10 ** d);
const POW2 = Array.from({ length: 64 }, (_, b) => 2 ** b);
const TWO32 = 2 ** 32;

/** A block's readings (time-ordered, UTC ms), or its superseded versions (with supersededAt). */
export interface Columns {
  times: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  recordedAt: Float64Array;
  supersededAt?: Float64Array;
  /** Decimal digits every value has at most (each is k / 10^digits exactly), or -1. */
  digits: number;
}

// ---- bytes ----

/** A growing byte buffer with the codec's primitives. */
export class ByteWriter {
  bytes: Uint8Array;
  private view: DataView;
  at = 0;
  /** Bits not yet written (least significant first) and how many. */
  private acc = 0;
  private accBits = 0;

  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
  }

  ensure(more: number): void {
    if (this.at + more <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.at + more + 64));
    next.set(this.bytes.subarray(0, this.at));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.bytes[this.at++] = v;
  }

  /** An unsigned safe integer, 7 bits a byte. */
  varint(v: number): void {
    this.ensure(8);
    while (v >= 128) {
      this.bytes[this.at++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.bytes[this.at++] = v;
  }

  /** A signed safe integer of magnitude below 2^52. */
  zigzag(v: number): void {
    this.varint(v >= 0 ? 2 * v : -2 * v - 1);
  }

  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.at, v);
    this.at += 8;
  }

  /** Appends the low `width` (≤ 32) bits of v (an unsigned integer) to the bit stream. */
  bits(v: number, width: number): void {
    this.acc += (v % POW2[width]!) * POW2[this.accBits]!;
    this.accBits += width;
    this.ensure(5);
    while (this.accBits >= 8) {
      const byte = this.acc % 256;
      this.bytes[this.at++] = byte;
      this.acc = (this.acc - byte) / 256;
      this.accBits -= 8;
    }
  }

  /** Ends the bit stream at a byte boundary. */
  flushBits(): void {
    if (this.accBits > 0) {
      this.u8(this.acc);
      this.acc = 0;
      this.accBits = 0;
    }
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.at);
  }
}

/** Reads what ByteWriter wrote. */
export class ByteReader {
  /** Made on the first f64 only: most reads need none (a DataView per block showed in profiles). */
  private view: DataView | undefined;
  at: number;
  private acc = 0;
  private accBits = 0;

  constructor(
    readonly bytes: Uint8Array,
    at = 0,
  ) {
    this.at = at;
  }

  u8(): number {
    if (this.at >= this.bytes.length) throw new RangeError('reading block ends early');
    return this.bytes[this.at++]!;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.u8();
      v += (b & 127) * scale;
      if (b < 128) return v;
      scale *= 128;
      if (scale > 2 ** 56) throw new RangeError('reading block varint too long');
    }
  }

  zigzag(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  f64(): number {
    if (this.at + 8 > this.bytes.length) throw new RangeError('reading block ends early');
    this.view ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    const v = this.view.getFloat64(this.at);
    this.at += 8;
    return v;
  }

  bits(width: number): number {
    while (this.accBits < width) {
      this.acc += this.u8() * POW2[this.accBits]!;
      this.accBits += 8;
    }
    const v = this.acc % POW2[width]!;
    this.acc = (this.acc - v) / POW2[width]!;
    this.accBits -= width;
    return v;
  }

  /** Leaves the bit stream (its last byte's unused bits). */
  endBits(): void {
    this.acc = 0;
    this.accBits = 0;
  }
}

// ---- frames of reference ----

function bitWidth(range: number): number {
  let w = 0;
  while (w < 32 && range >= POW2[w]!) w += 1;
  return w;
}

/** Whether every frame of values[from, to) spans less than 2^32. */
function framesFit(values: ArrayLike<number>, from: number, to: number): boolean {
  for (let f = from; f < to; f += FRAME) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = f; i < Math.min(f + FRAME, to); i += 1) {
      const v = values[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    if (max - min >= TWO32) return false;
  }
  return true;
}

/** values[from, to) (safe integers, each frame spanning < 2^32) as frames of reference. Widths
 * up to 24 bits are packed in int32 arithmetic (the common case; measured in the ingest profile). */
function writeFrames(w: ByteWriter, values: ArrayLike<number>, from: number, to: number): void {
  for (let f = from; f < to; f += FRAME) {
    const end = Math.min(f + FRAME, to);
    let min = Infinity;
    let max = -Infinity;
    for (let i = f; i < end; i += 1) {
      const v = values[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const width = bitWidth(max - min);
    w.zigzag(min);
    w.u8(width);
    if (width === 0) continue;
    if (width <= 24) {
      w.ensure(Math.ceil(((end - f) * width) / 8) + 4);
      const bytes = w.bytes;
      let at = w.at;
      let acc = 0;
      let accBits = 0;
      for (let i = f; i < end; i += 1) {
        acc |= (values[i]! - min) << accBits;
        accBits += width;
        while (accBits >= 8) {
          bytes[at++] = acc & 255;
          acc >>>= 8;
          accBits -= 8;
        }
      }
      if (accBits > 0) bytes[at++] = acc & 255;
      w.at = at;
      continue;
    }
    for (let i = f; i < end; i += 1) w.bits(values[i]! - min, width);
    w.flushBits();
  }
}

/** Reads `count` values written by writeFrames into dst[0 .. count). Widths up to 24 bits take
 * an int32 path (the common case: a few bits a reading); no callback per value (profiled: a
 * closure call per reading was most of a block's decoding). */
function readFrames(r: ByteReader, count: number, dst: Float64Array): void {
  const bytes = r.bytes;
  for (let f = 0; f < count; f += FRAME) {
    const end = Math.min(f + FRAME, count);
    const min = r.zigzag();
    const width = r.u8();
    if (width === 0) {
      dst.fill(min, f, end);
      continue;
    }
    if (width > 32) throw new RangeError('reading block frame too wide');
    const length = Math.ceil(((end - f) * width) / 8);
    if (r.at + length > bytes.length) throw new RangeError('reading block ends early');
    if (width <= 24) {
      const mask = (1 << width) - 1;
      let acc = 0;
      let accBits = 0;
      let p = r.at;
      for (let i = f; i < end; i += 1) {
        while (accBits < width) {
          acc |= bytes[p++]! << accBits;
          accBits += 8;
        }
        dst[i] = min + (acc & mask);
        acc >>>= width;
        accBits -= width;
      }
      r.at += length;
    } else {
      // r.bits reads the frame's bytes itself, exactly `length` of them.
      for (let i = f; i < end; i += 1) dst[i] = min + r.bits(width);
      r.endBits();
    }
  }
}

/** Frame values as read, before they are summed into times or values (one reader at a time per thread). */
let frameScratch = new Float64Array(256);

function frames(r: ByteReader, count: number): Float64Array {
  if (frameScratch.length < count) frameScratch = new Float64Array(2 * count);
  readFrames(r, count, frameScratch);
  return frameScratch;
}

// ---- runs ----

/** An instant (UTC ms) near `base`: whole milliseconds as a zigzag varint of the difference with
 * a 0 tag bit (4–6 bytes for a recordedAt days or years after its reading's day), anything else as
 * a 1 tag and an f64 (exact for any double). */
export function writeInstant(w: ByteWriter, value: number, base: number): void {
  const d = value - base;
  if (Number.isSafeInteger(value) && !Object.is(value, -0) && Number.isSafeInteger(d) && Math.abs(d) < 2 ** 50) w.varint(2 * (d >= 0 ? 2 * d : -2 * d - 1));
  else {
    w.varint(1);
    w.f64(value);
  }
}

export function readInstant(r: ByteReader, base: number): number {
  const tagged = r.varint();
  if (tagged % 2 === 1) {
    if (tagged !== 1) throw new RangeError('reading block instant invalid');
    return r.f64();
  }
  const z = tagged / 2;
  return base + (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
}

/** Runs of equal values: varint runs, then per run varint length and the value — an instant
 * (`base` for the first, the previous run's for the others) or, without a base, a varint. */
function writeRuns(w: ByteWriter, values: ArrayLike<number>, from: number, to: number, base?: number): void {
  let runs = 0;
  for (let i = from; i < to; i += 1) if (i === from || !Object.is(values[i], values[i - 1])) runs += 1;
  w.varint(runs);
  let previous = base;
  for (let i = from; i < to; ) {
    let j = i + 1;
    while (j < to && Object.is(values[j], values[i])) j += 1;
    w.varint(j - i);
    if (previous === undefined) w.varint(values[i]!);
    else {
      writeInstant(w, values[i]!, previous);
      // The next run's difference from this one (a finite number, or the day again).
      previous = Number.isFinite(values[i]) ? values[i]! : base!;
    }
    i = j;
  }
}

function readRuns(r: ByteReader, out: Float64Array | Int32Array, base?: number): void {
  const runs = r.varint();
  let k = 0;
  let previous = base;
  for (let run = 0; run < runs; run += 1) {
    const length = r.varint();
    let v: number;
    if (previous === undefined) v = r.varint();
    else {
      v = readInstant(r, previous);
      previous = Number.isFinite(v) ? v : base!;
    }
    if (k + length > out.length) throw new RangeError('reading block runs too long');
    out.fill(v, k, k + length);
    k += length;
  }
  if (k !== out.length) throw new RangeError('reading block runs too short');
}

// ---- values ----

/** The fewest decimal digits d with every value = k / 10^d exactly (k a safe integer below
 * MAX_SCALED; -0 never), or -1. */
export function decimalDigits(values: ArrayLike<number>, from: number, to: number): number {
  let digits = 0;
  for (let i = from; i < to; i += 1) {
    const x = values[i]!;
    if (x === 0 && 1 / x < 0) return -1;
    for (;;) {
      const k = Math.round(x * POW10[digits]!);
      if (Math.abs(k) < MAX_SCALED && k / POW10[digits]! === x) break;
      digits += 1;
      if (digits > MAX_DIGITS) return -1;
    }
  }
  return digits;
}

/** Scratch for the scaled integers and their steps (one encoder at a time per thread). */
let scratchK = new Float64Array(256);
let scratchSteps = new Float64Array(256);

/** The scaled integers in scratchK (false when they do not fit frames: then XOR). */
function scaled(values: ArrayLike<number>, from: number, to: number, digits: number): boolean {
  const n = to - from;
  if (scratchK.length < n) {
    scratchK = new Float64Array(2 * n);
    scratchSteps = new Float64Array(2 * n);
  }
  const k = scratchK;
  const p = POW10[digits]!;
  for (let i = 0; i < n; i += 1) {
    k[i] = Math.round(values[from + i]! * p);
    // Bit for bit or not at all (decimalDigits checked each value at the digits it had then).
    if (k[i]! / p !== values[from + i]) return false;
  }
  for (let i = 1; i < n; i += 1) scratchSteps[i - 1] = k[i]! - k[i - 1]!;
  return framesFit(scratchSteps, 0, n - 1);
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LITTLE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
const LO = LITTLE ? 0 : 1;
const HI = LITTLE ? 1 : 0;

const ctz32 = (x: number) => 31 - Math.clz32(x & -x);

/** Gorilla's XOR encoding (Pelkonen et al., 2015) of values[from, to), as bits. */
function writeXor(w: ByteWriter, values: ArrayLike<number>, from: number, to: number): void {
  f64[0] = values[from]!;
  let ph = u32[HI]!;
  let pl = u32[LO]!;
  w.bits(ph, 32);
  w.bits(pl, 32);
  let lead = -1;
  let trail = 0;
  for (let i = from + 1; i < to; i += 1) {
    f64[0] = values[i]!;
    const h = u32[HI]!;
    const l = u32[LO]!;
    const xh = (h ^ ph) >>> 0;
    const xl = (l ^ pl) >>> 0;
    ph = h;
    pl = l;
    if (xh === 0 && xl === 0) {
      w.bits(0, 1);
      continue;
    }
    w.bits(1, 1);
    const lz = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    const tz = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
    let length: number;
    let shift: number;
    if (lead >= 0 && lz >= lead && tz >= trail) {
      w.bits(0, 1);
      length = 64 - lead - trail;
      shift = trail;
    } else {
      const lzc = Math.min(lz, 31);
      length = 64 - lzc - tz;
      w.bits(1, 1);
      w.bits(lzc, 5);
      w.bits(length - 1, 6);
      lead = lzc;
      trail = tz;
      shift = tz;
    }
    // The meaningful bits: (xh:xl) >>> shift, its low `length` bits.
    let sl: number;
    let sh: number;
    if (shift === 0) {
      sl = xl;
      sh = xh;
    } else if (shift < 32) {
      sl = ((xl >>> shift) | (xh << (32 - shift))) >>> 0;
      sh = xh >>> shift;
    } else {
      sl = xh >>> (shift - 32);
      sh = 0;
    }
    if (length <= 32) w.bits(sl, length);
    else {
      w.bits(sl, 32);
      w.bits(sh, length - 32);
    }
  }
  w.flushBits();
}

function readXor(r: ByteReader, out: Float64Array): void {
  let ph = r.bits(32);
  let pl = r.bits(32);
  u32[HI] = ph;
  u32[LO] = pl;
  out[0] = f64[0]!;
  let lead = 0;
  let trail = 0;
  for (let i = 1; i < out.length; i += 1) {
    if (r.bits(1) === 1) {
      if (r.bits(1) === 1) {
        lead = r.bits(5);
        const length = r.bits(6) + 1;
        trail = 64 - lead - length;
        if (trail < 0) throw new RangeError('reading block XOR window invalid');
      }
      const length = 64 - lead - trail;
      let sl: number;
      let sh = 0;
      if (length <= 32) sl = r.bits(length);
      else {
        sl = r.bits(32);
        sh = r.bits(length - 32);
      }
      // (sh:sl) << trail
      let xl: number;
      let xh: number;
      if (trail === 0) {
        xl = sl;
        xh = sh;
      } else if (trail < 32) {
        xl = (sl << trail) >>> 0;
        xh = ((sh << trail) | (sl >>> (32 - trail))) >>> 0;
      } else {
        xl = 0;
        xh = (sl << (trail - 32)) >>> 0;
      }
      ph = (ph ^ xh) >>> 0;
      pl = (pl ^ xl) >>> 0;
    }
    u32[HI] = ph;
    u32[LO] = pl;
    out[i] = f64[0]!;
  }
  r.endBits();
}

/** Writes the values; returns their decimal digits, or -1 (XOR). */
function writeValues(w: ByteWriter, values: ArrayLike<number>, from: number, to: number): number {
  const digits = decimalDigits(values, from, to);
  if (digits < 0 || !scaled(values, from, to, digits)) {
    w.u8(XOR);
    writeXor(w, values, from, to);
    return -1;
  }
  w.u8(digits);
  w.zigzag(scratchK[0]!);
  writeFrames(w, scratchSteps, 0, to - from - 1);
  return digits;
}

/** Reads the values; returns their decimal digits, or -1 (XOR). */
function readValues(r: ByteReader, out: Float64Array): number {
  const mode = r.u8();
  if (mode === XOR) {
    readXor(r, out);
    return -1;
  }
  if (mode > MAX_DIGITS) throw new RangeError(`reading block value mode ${mode} is not known`);
  const p = POW10[mode]!;
  let k = r.zigzag();
  out[0] = k / p;
  const steps = frames(r, out.length - 1);
  for (let i = 1; i < out.length; i += 1) {
    k += steps[i - 1]!;
    out[i] = k / p;
  }
  return mode;
}

// ---- times ----

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function writeTimes(w: ByteWriter, base: number, times: ArrayLike<number>, from: number, to: number): void {
  const n = to - from;
  const first = times[from]! - base;
  if (!Number.isInteger(first) || first < 0) throw new RangeError('reading time outside its UTC day or not whole milliseconds');
  let g = first;
  for (let i = from + 1; i < to; i += 1) {
    const step = times[i]! - times[i - 1]!;
    if (!Number.isInteger(step) || step < 0) throw new RangeError('reading times not ascending whole milliseconds');
    g = gcd(step, g);
  }
  w.varint(g);
  if (g === 0) return;
  w.varint(first / g);
  if (n === 1) return;
  if (scratchSteps.length < n) {
    scratchK = new Float64Array(2 * n);
    scratchSteps = new Float64Array(2 * n);
  }
  const q = scratchSteps;
  for (let i = from + 1; i < to; i += 1) q[i - from - 1] = (times[i]! - times[i - 1]!) / g;
  writeFrames(w, q, 0, n - 1);
}

function readTimes(r: ByteReader, base: number, out: Float64Array): void {
  const g = r.varint();
  // g = 0: every time is the day's start (history: versions of the midnight reading).
  if (g === 0) {
    out.fill(base);
    return;
  }
  let t = base + r.varint() * g;
  out[0] = t;
  if (out.length === 1) return;
  const steps = frames(r, out.length - 1);
  for (let i = 1; i < out.length; i += 1) {
    t += steps[i - 1]! * g;
    out[i] = t;
  }
}

// ---- columns ----

/** Encodes readings [from, to) of the columns (times in UTC day `day`); `kind` HISTORY when
 * they carry supersededAt. `recordedAt` may be one number for all. Returns the decimal digits
 * of the values, or -1 (XOR). */
export function encodeColumns(
  w: ByteWriter,
  day: number,
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  resolutions: ArrayLike<number>,
  recordedAt: ArrayLike<number> | number,
  from: number,
  to: number,
  supersededAt?: ArrayLike<number>,
): number {
  const n = to - from;
  const base = day * 86_400_000;
  w.u8(supersededAt ? HISTORY : DATA);
  w.varint(n);
  if (typeof recordedAt === 'number') {
    w.varint(n > 0 ? 1 : 0);
    if (n > 0) {
      w.varint(n);
      writeInstant(w, recordedAt, base);
    }
  } else writeRuns(w, recordedAt, from, to, base);
  if (supersededAt) writeRuns(w, supersededAt, from, to, base);
  writeRuns(w, resolutions, from, to);
  if (n === 0) return -1;
  writeTimes(w, base, times, from, to);
  return writeValues(w, values, from, to);
}

/** Where the recordedAt runs of DATA columns start and end: what follows them is the readings
 * without their recordedAt (two blocks with equal bytes from there hold the same readings). */
export function recordedAtRuns(bytes: Uint8Array): { start: number; end: number; n: number } {
  const r = new ByteReader(bytes);
  if (r.u8() !== DATA) throw new RangeError('reading block columns are not DATA');
  const n = r.varint();
  const start = r.at;
  const runs = r.varint();
  for (let k = 0; k < runs; k += 1) {
    r.varint();
    readInstant(r, 0);
  }
  return { start, end: r.at, n };
}

export function afterRecordedAt(bytes: Uint8Array): number {
  return recordedAtRuns(bytes).end;
}

/** DATA columns of UTC day `day` with every reading's recordedAt set to `recordedAt`, written to
 * `w` (a block the worker encoded, taken again once the write holds its locks). */
export function writeWithRecordedAt(w: ByteWriter, bytes: Uint8Array, day: number, recordedAt: number): void {
  const runs = recordedAtRuns(bytes);
  w.ensure(bytes.length + 16);
  w.bytes.set(bytes.subarray(0, runs.start), w.at);
  w.at += runs.start;
  if (runs.n > 0) {
    w.varint(1);
    w.varint(runs.n);
    writeInstant(w, recordedAt, day * 86_400_000);
  } else w.varint(0);
  w.ensure(bytes.length - runs.end);
  w.bytes.set(bytes.subarray(runs.end), w.at);
  w.at += bytes.length - runs.end;
}

/** DATA columns as HISTORY columns, every reading superseded at `supersededAt` (a block whose
 * readings were all replaced, without history yet): a copy with one run inserted, no decoding. */
export function dataAsHistory(bytes: Uint8Array, day: number, supersededAt: number): Uint8Array {
  const runs = recordedAtRuns(bytes);
  const w = new ByteWriter(bytes.length + 16);
  w.u8(HISTORY);
  w.varint(runs.n);
  w.ensure(runs.end);
  w.bytes.set(bytes.subarray(runs.start, runs.end), w.at);
  w.at += runs.end - runs.start;
  w.varint(1);
  w.varint(runs.n);
  writeInstant(w, supersededAt, day * 86_400_000);
  w.ensure(bytes.length - runs.end);
  w.bytes.set(bytes.subarray(runs.end), w.at);
  w.at += bytes.length - runs.end;
  return w.result();
}

/** How many readings the columns hold, without decoding them. */
export function columnsCount(bytes: Uint8Array): number {
  const r = new ByteReader(bytes);
  r.u8();
  return r.varint();
}

/** Reusable arrays for decodeColumns (grown as needed): a caller that consumes each block's
 * columns before decoding the next one allocates nothing per block. */
export class ColumnsScratch {
  times = new Float64Array(128);
  values = new Float64Array(128);
  resolutions = new Int32Array(128);
  recordedAt = new Float64Array(128);
  supersededAt = new Float64Array(128);

  columns(n: number, history: boolean): Columns {
    if (this.times.length < n) {
      const size = Math.max(n, 2 * this.times.length);
      this.times = new Float64Array(size);
      this.values = new Float64Array(size);
      this.resolutions = new Int32Array(size);
      this.recordedAt = new Float64Array(size);
      this.supersededAt = new Float64Array(size);
    }
    return {
      times: this.times.subarray(0, n),
      values: this.values.subarray(0, n),
      resolutions: this.resolutions.subarray(0, n),
      recordedAt: this.recordedAt.subarray(0, n),
      supersededAt: history ? this.supersededAt.subarray(0, n) : undefined,
      digits: 0,
    };
  }
}

/** Decodes columns (DATA or HISTORY) of UTC day `day`, into `scratch` when given (valid until
 * its next use). */
export function decodeColumns(bytes: Uint8Array, day: number, scratch?: ColumnsScratch): Columns {
  const r = new ByteReader(bytes);
  const kind = r.u8();
  if (kind !== DATA && kind !== HISTORY) throw new RangeError(`reading block kind ${kind} is not known`);
  const n = r.varint();
  if (n > 86_400_000) throw new RangeError('reading block count invalid');
  const out: Columns = scratch
    ? scratch.columns(n, kind === HISTORY)
    : { times: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n), recordedAt: new Float64Array(n), supersededAt: kind === HISTORY ? new Float64Array(n) : undefined, digits: 0 };
  const base = day * 86_400_000;
  readRuns(r, out.recordedAt, base);
  if (kind === HISTORY) readRuns(r, out.supersededAt!, base);
  readRuns(r, out.resolutions);
  if (n === 0) return out;
  readTimes(r, day * 86_400_000, out.times);
  out.digits = readValues(r, out.values);
  return out;
}
