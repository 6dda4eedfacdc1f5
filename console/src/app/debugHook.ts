// `window.__flexConsole`: what the console shows, for tests and benchmarks to read (the chart's
// data and view, draw timings). Read-only information; nothing reads it back.
type Hook = Record<string, unknown>;

declare global {
  interface Window {
    __flexConsole?: Hook;
  }
}

export function publish(key: string, value: unknown): void {
  (window.__flexConsole ??= {})[key] = value;
}
