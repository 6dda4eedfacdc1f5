// Rows of a QuestDB read as the bytes QuestDB sent, not as strings: a node-postgres client whose
// protocol parser hands each DataRow of a streamed read to the reader where it lies in the
// socket's buffer, instead of decoding every field as UTF-8 text (pg-protocol's parser makes a
// string of each field, in `text` and in `binary` mode alike).
//
// Hand-written hot path, measured (docs/benchmarks.md, QuestDB): for
// hourly buckets, decoding the three or four text fields of each row (Buffer#toString, slice,
// utf8Slice) and collecting the strings was a third of the Node CPU of the read; the reader
// now takes integers from their digits and decimals from a latin1 slice.
//
// How: pg's Connection (pg's version is locked in package-lock.json) parses the socket's data in `attachListeners` with
// pg-protocol's Parser, whose `handlePacket` turns one message into an object. Clients of the
// QuestDB read pool replace `attachListeners` with the same code around a Parser whose
// `handlePacket` gives a DataRow to `rawRow` while a streamed read has set it; every other
// message, and every DataRow of other queries, goes the usual way. The Parser is the one pg
// itself loads (resolved from pg's own location).
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import pg from 'pg';

/** The fields of one DataRow: field i is bytes[start[i], start[i] + length[i]), length -1 for
 * NULL. Valid only during the call it is given to (the bytes are the parser's buffer). */
export interface RawRow {
  bytes: Buffer;
  count: number;
  start: Int32Array;
  length: Int32Array;
}

type PacketHandler = (offset: number, code: number, length: number, bytes: Buffer) => unknown;
interface ParserLike {
  parse(buffer: Buffer, callback: (message: { name: string }) => void): void;
}
const requirePg = createRequire(createRequire(import.meta.url).resolve('pg'));
const { Parser } = requirePg('pg-protocol/dist/parser.js') as { Parser: new () => ParserLike };
const superHandlePacket = (Parser.prototype as unknown as { handlePacket: PacketHandler }).handlePacket;
// A pg without these internals would leave streamed reads empty: refuse to start instead.
if (typeof superHandlePacket !== 'function') throw new Error('pg-protocol Parser#handlePacket not found: the pg version is not the one rawRows.ts was written for');

const DATA_ROW = 68; // 'D'
const MAX_FIELDS = 16;
/** What the parser reports for a DataRow given to `rawRow`: nothing is emitted for it. */
const TAKEN = { name: 'takenDataRow' };

class RawRowParser extends Parser {
  private readonly row: RawRow = { bytes: Buffer.alloc(0), count: 0, start: new Int32Array(MAX_FIELDS), length: new Int32Array(MAX_FIELDS) };

  constructor(private readonly client: RawRowClient) {
    super();
  }

  handlePacket(offset: number, code: number, length: number, bytes: Buffer): unknown {
    const sink = this.client.rawRow;
    if (code !== DATA_ROW || !sink) return superHandlePacket.call(this, offset, code, length, bytes);
    const row = this.row;
    const count = bytes.readInt16BE(offset);
    if (count > MAX_FIELDS) return superHandlePacket.call(this, offset, code, length, bytes);
    let at = offset + 2;
    for (let i = 0; i < count; i += 1) {
      const n = bytes.readInt32BE(at);
      at += 4;
      row.start[i] = at;
      row.length[i] = n;
      if (n > 0) at += n;
    }
    row.bytes = bytes;
    row.count = count;
    sink(row);
    return TAKEN;
  }
}

/** A pg client whose DataRows go to `rawRow` while it is set (streamRaw sets it for one query). */
export class RawRowClient extends pg.Client {
  /** Takes the rows of the running query; must not throw. */
  rawRow: ((row: RawRow) => void) | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const connection = (this as unknown as { connection: EventEmitter & { _emitMessage?: boolean; attachListeners(stream: NodeJS.ReadableStream): void } }).connection;
    if (typeof connection.attachListeners !== 'function') throw new Error('pg Connection#attachListeners not found: the pg version is not the one rawRows.ts was written for');
    // pg's Connection#attachListeners with the parser replaced (node_modules/pg/lib/connection.js).
    connection.attachListeners = (stream) => {
      const parser = new RawRowParser(this);
      stream.on('data', (buffer: Buffer) =>
        parser.parse(buffer, (message) => {
          if (message === TAKEN) return;
          if (connection._emitMessage) connection.emit('message', message);
          connection.emit(message.name === 'error' ? 'errorMessage' : message.name, message);
        }),
      );
    };
  }
}

/** A decimal integer field (QuestDB `long` or `int` text, e.g. microseconds) from its digits, as
 * Number() of its text reads it: 0 for NULL (Number(null)), NaN for anything but digits with an
 * optional minus. Exact below 2^53. */
export function rawLong(row: RawRow, i: number): number {
  const { bytes } = row;
  let at = row.start[i]!;
  const length = row.length[i]!;
  if (length < 0) return 0;
  const end = at + length;
  if (length === 0) return 0;
  const negative = bytes[at] === 45; // -
  if (negative) at += 1;
  if (at === end) return NaN;
  let n = 0;
  for (; at < end; at += 1) {
    const d = bytes[at]! - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

/** Exact powers of ten (10^22 is the largest a double holds exactly). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Digits of a decimal read from its digits: below 10^15, the whole digits are an exact double. */
const FAST_DIGITS = 15;

/** A numeric field (QuestDB `double` text: `12.5`, `1.0E-5`, `NaN`, `Infinity`), as Number() of
 * its text reads it (0 for NULL, as Number(null)).
 *
 * Hand-written hot path (a string per row was the largest self time of the one-register-year
 * read after the JSON writer, docs/benchmarks.md, QuestDB): a plain decimal
 * of at most 15 digits (`-12.345`; ~70% of hourly averages of meter readings in thousandths) is
 * read from its digits as m / 10^k, with m < 10^15 and 10^k (k ≤ 15) exact doubles, so the one
 * division rounds correctly, as Number() does (Clinger's fast path). Anything else (more digits,
 * an exponent, NaN, Infinity) goes through a latin1 slice and Number(). */
export function rawNumber(row: RawRow, i: number): number {
  const length = row.length[i]!;
  if (length < 0) return 0;
  const start = row.start[i]!;
  const { bytes } = row;
  const end = start + length;
  let at = start;
  const negative = bytes[at] === 45; // -
  if (negative) at += 1;
  let m = 0;
  let digits = 0;
  let point = -1;
  for (; at < end; at += 1) {
    const c = bytes[at]!;
    if (c === 46 && point === -1) point = digits; // .
    else {
      const d = c - 48;
      if (d < 0 || d > 9) break;
      m = m * 10 + d;
      digits += 1;
    }
  }
  if (at === end && digits > 0 && digits <= FAST_DIGITS) {
    const value = point === -1 ? m : m / POWERS_OF_TEN[digits - point]!;
    return negative ? -value : value;
  }
  return Number((bytes as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(start, end));
}
