// Progress of a long import on stderr. On a terminal: one line redrawn in place (a bar, percent of
// the file read, rows, rows/s, ETA). Otherwise (a log file, CI): a plain line every few seconds.
// The percentage counts bytes of the file on disk, so for a gzip file it is the share of the
// compressed bytes consumed; the ETA assumes the rest goes at the average speed so far.

export interface ProgressState {
  rows: number;
  rejected: number;
  bytesRead: number;
  totalBytes: number;
}

const TTY_REDRAW_MS = 250;

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

export class Progress {
  private readonly startedAt = performance.now();
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly tty: boolean,
    private readonly intervalMs: number,
    /** `bytes`: bytesRead of totalBytes of a file (the import); `period`: bytesRead is the share
     * of registers × period written so far, totalBytes 1 (the export). */
    private readonly measure: 'bytes' | 'period' = 'bytes',
  ) {
    this.lastDraw = this.startedAt;
  }

  update(state: ProgressState): void {
    const now = performance.now();
    if (now - this.lastDraw < (this.tty ? TTY_REDRAW_MS : this.intervalMs)) return;
    this.lastDraw = now;
    const seconds = (now - this.startedAt) / 1000;
    const fraction = state.totalBytes > 0 ? Math.min(1, state.bytesRead / state.totalBytes) : 0;
    const rate = state.rows / seconds;
    const eta = fraction > 0 ? (seconds / fraction) * (1 - fraction) : Infinity;
    const percent = `${(fraction * 100).toFixed(1)}%`;
    const rejected = state.rejected > 0 ? `, ${count(state.rejected)} rejected` : '';
    if (this.tty) {
      const width = 24;
      const filled = Math.round(fraction * width);
      const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent.padStart(6)}  ${count(state.rows)} rows${rejected}  ${count(rate)} rows/s  ETA ${formatDuration(eta)}`;
      const columns = this.out.columns || 120;
      this.out.write(`\r${line.slice(0, columns - 1)}\x1b[K`);
      this.drawn = true;
    } else {
      const of = this.measure === 'bytes' ? `(${formatBytes(state.bytesRead)} of ${formatBytes(state.totalBytes)})` : 'of registers × period';
      this.out.write(`progress: ${percent} ${of}, ${count(state.rows)} rows${rejected}, ${count(rate)} rows/s, ETA ${formatDuration(eta)}\n`);
    }
  }

  /** Clears the terminal line before the summary. */
  done(): void {
    if (this.tty && this.drawn) this.out.write('\r\x1b[K');
  }
}
