// The CSV import in remote mode: the same file format and row checks as the database import
// (importer.ts), sent as POST /api/readings batches paced under the rate limit (remote.ts). The
// API is all-or-nothing per request while the import is per row, so a batch the server refuses
// with 400 has the rows its error paths name (a meter, a register, a value) moved to the reject
// file and is sent again without them; rows of a meter or register the server does not know are
// rejected together. Meters and registers are named by externalId (the API's names).
import { Fields, RecordSplitter } from './csv.ts';
import type { CsvInput } from './csvInput.ts';
import { feedRecords, ImportError, readHeaderRecord, type ImportStats } from './importer.ts';
import type { Progress } from './progress.ts';
import { COLUMNS, readReading, type ColumnIndex, type Reading } from './readingRow.ts';
import type { Reject } from './importBatch.ts';
import type { RejectFile } from './rejectFile.ts';
import { RemoteError, type RemoteApi } from './remote.ts';

export interface RemoteImportOptions {
  input: CsvInput;
  api: RemoteApi;
  rejects: RejectFile;
  batchRows: number;
  progress?: Progress;
  signal?: AbortSignal;
}

interface Row {
  line: number;
  record: string;
  timestamp: number;
  value: number;
  resolution: number;
}

/** Rows of one batch by meter, then register (externalIds), in file order. */
type Batch = Map<string, Map<string, Row[]>>;

const PATH = /^meters\[(\d+)\](?:\.registers\[(\d+)\](?:\.values\[(\d+)\])?)?/;

function body(batch: Batch): string {
  const meters = [...batch].map(([meter, registers]) => ({
    id: meter,
    registers: [...registers].map(([register, rows]) => ({
      id: register,
      values: rows.map((r) => ({ timestamp: new Date(r.timestamp).toISOString(), value: r.value, resolution: r.resolution })),
    })),
  }));
  return JSON.stringify({ meters });
}

/** Moves the rows a 400's error paths name from the batch to `rejects`; how many moved. */
function rejectNamed(batch: Batch, errors: readonly { path: string; message: string }[], rejects: Reject[]): number {
  const meters = [...batch];
  const doomed = new Set<Row>();
  const reasons = new Map<Row, string>();
  for (const error of errors) {
    const m = PATH.exec(error.path.replace(/^\//, ''));
    if (!m) continue;
    const meter = meters[Number(m[1])];
    if (!meter) continue;
    const registers = [...meter[1]];
    const picked = m[2] === undefined ? registers : [registers[Number(m[2])]].filter((r) => r !== undefined);
    for (const [, rows] of picked) {
      const named = m[3] === undefined ? rows : [rows[Number(m[3])]].filter((r) => r !== undefined);
      for (const row of named) {
        doomed.add(row);
        if (!reasons.has(row)) reasons.set(row, error.message);
      }
    }
  }
  for (const [meterId, registers] of batch) {
    for (const [registerId, rows] of registers) {
      const kept = rows.filter((r) => !doomed.has(r));
      if (kept.length === 0) registers.delete(registerId);
      else registers.set(registerId, kept);
    }
    if (registers.size === 0) batch.delete(meterId);
  }
  for (const row of doomed) rejects.push({ line: row.line, reason: reasons.get(row)!, record: row.record });
  return doomed.size;
}

export async function runRemoteImport(o: RemoteImportOptions, stats: ImportStats): Promise<void> {
  const splitter = new RecordSplitter();
  const fields = new Fields(COLUMNS.length);
  const reading: Reading = { timestamp: 0, value: 0, resolution: 0 };
  let columns: ColumnIndex | undefined;
  let batch: Batch = new Map();
  let rows = 0;
  let lastLine = 0;
  let rejects: Reject[] = [];
  let seen = new Set<string>();
  let duplicates = 0;

  const send = async () => {
    const sending = batch;
    const sendingRejects = rejects;
    const sendingDuplicates = duplicates;
    const through = lastLine;
    batch = new Map();
    rejects = [];
    seen = new Set();
    duplicates = 0;
    rows = 0;
    let stored = 0;
    for (const registers of sending.values()) for (const list of registers.values()) stored += list.length;
    while (sending.size > 0) {
      try {
        await o.api.request('POST', '/api/readings', body(sending));
        break;
      } catch (err) {
        if (!(err instanceof RemoteError) || err.status !== 400 || !err.problem?.errors?.length) throw new ImportError(err instanceof Error ? err.message : String(err));
        const moved = rejectNamed(sending, err.problem.errors, sendingRejects);
        if (moved === 0) throw new ImportError(`the server refused a batch: ${err.message}`);
        stored -= moved;
      }
    }
    sendingRejects.sort((a, b) => a.line - b.line);
    await o.rejects.append(sendingRejects);
    stats.rejected += sendingRejects.length;
    stats.stored += stored - sendingDuplicates;
    stats.duplicates += sendingDuplicates;
    stats.committedThroughLine = through;
  };

  const record = (): void => {
    const { buf, start, end, line } = splitter;
    if (start === end) return;
    const text = () => buf.toString('utf8', start, end);
    if (!columns) {
      columns = readHeaderRecord(splitter, fields);
      return;
    }
    stats.rows += 1;
    lastLine = line;
    const problem = fields.split(buf, start, end, splitter.quoted);
    if (problem) return void rejects.push({ line, reason: problem, record: text() });
    if (fields.count !== COLUMNS.length) return void rejects.push({ line, reason: `expected ${COLUMNS.length} fields, got ${fields.count > fields.max ? 'more' : fields.count}`, record: text() });
    const invalid = readReading(buf, fields, columns, reading);
    if (invalid) return void rejects.push({ line, reason: invalid, record: text() });
    const meterId = fields.text(buf, columns.meterId);
    const registerId = fields.text(buf, columns.registerId);
    let registers = batch.get(meterId);
    if (!registers) batch.set(meterId, (registers = new Map()));
    let list = registers.get(registerId);
    if (!list) registers.set(registerId, (list = []));
    list.push({ line, record: text(), timestamp: reading.timestamp, value: reading.value, resolution: reading.resolution });
    // The server keeps the last of equal timestamps in a request: count those as duplicates.
    const key = `${meterId}\u0000${registerId}\u0000${reading.timestamp}`;
    if (seen.has(key)) duplicates += 1;
    else seen.add(key);
    rows += 1;
  };

  const drain = async () => {
    while (splitter.next()) {
      record();
      if (rows + rejects.length >= o.batchRows) await send();
    }
  };

  try {
    await feedRecords(o, splitter, stats, drain, () => rejects.length, () => columns !== undefined);
    await send();
  } finally {
    o.input.close();
  }
}
