// The Piscina pool for CPU-heavy work (DESIGN.md): reading batches, aggregation, virtual
// registers. One pool, several task files. Run from TypeScript sources (tests, `npm run dev`)
// the workers load tsx; run from dist/ they load the compiled .js files.
import type { TransferListItem } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type aggregateTask from '../workers/readings/aggregateTask.ts';
import type ilpTask from '../workers/readings/ilpTask.ts';
import type readingsTask from '../workers/readings/task.ts';
import type sliceTask from '../workers/readings/sliceTask.ts';
import type virtualTask from '../workers/virtual/task.ts';

/** The task entry points Piscina loads, by file: `run` takes each one's input and returns its
 * result type, taken from the entry point itself, so caller and worker cannot drift apart. */
interface WorkerTasks {
  'readings/task': typeof readingsTask;
  'readings/aggregateTask': typeof aggregateTask;
  'readings/ilpTask': typeof ilpTask;
  'readings/sliceTask': typeof sliceTask;
  'virtual/task': typeof virtualTask;
}
export type WorkerTaskFile = keyof WorkerTasks;

const fromSource = import.meta.url.endsWith('.ts');
const extension = fromSource ? '.ts' : '.js';

export class WorkerPool {
  private readonly piscina: Piscina;
  /** Threads at most: how many tasks run at once. */
  readonly size: number;

  /** `minThreads` stay started (the server keeps one warm; a CLI starts them on demand). */
  constructor(threads: number, minThreads = 1) {
    this.size = Math.max(1, threads);
    this.piscina = new Piscina({
      minThreads: Math.min(minThreads, Math.max(1, threads)),
      maxThreads: Math.max(1, threads),
      idleTimeout: 60_000,
      // A module URL for tsx: workers resolve it regardless of the current directory.
      execArgv: fromSource ? ['--import', import.meta.resolve('tsx')] : [],
    });
  }

  run<F extends WorkerTaskFile>(file: F, task: Parameters<WorkerTasks[F]>[0], transferList: readonly (ArrayBufferLike | TransferListItem)[] = []): Promise<ReturnType<WorkerTasks[F]>> {
    const filename = new URL(`../workers/${file}${extension}`, import.meta.url).href;
    // Shared memory is shared, not transferred (a SharedArrayBuffer in a transfer list throws).
    const transfers = transferList.filter((b) => !(b instanceof SharedArrayBuffer));
    return this.piscina.run(task, { filename, transferList: transfers as never }) as Promise<ReturnType<WorkerTasks[F]>>;
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}

/** An ArrayBuffer holding exactly these bytes, safe to transfer (pooled small Buffers are copied),
 * or, for bytes in shared memory, a view of them (shared, nothing to transfer). */
export function transferableCopy(bytes: Buffer): Uint8Array {
  // Shared memory (a large request body, src/http/body.ts) is read by the workers in place.
  if (bytes.buffer instanceof SharedArrayBuffer) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return new Uint8Array(bytes.buffer);
  return new Uint8Array(bytes);
}
