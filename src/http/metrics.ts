// Prometheus metrics. Process and pool metrics come from prom-client (one registry per app, so
// several apps can live in one process in tests). The per-request counter and latency histogram
// are kept here in plain arrays: prom-client hashes the label set on every observation, which
// profiling showed at about 5% of a cheap request; a bucket scan over a Float64Array is not
// visible. Labels use the route pattern, never the raw path, to keep cardinality bounded.
import client from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RouteSeries {
  method: string;
  route: string;
  /** Non-cumulative counts per bucket; the last slot is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
  statuses: Map<number, number>;
}

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class HttpMetrics {
  readonly registry = new client.Registry();
  private readonly series = new Map<string, RouteSeries>();

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = { method, route, buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0, statuses: new Map() };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i += 1;
    s.buckets[i]! += 1;
    s.sum += seconds;
    s.count += 1;
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
  }

  /** Registers a gauge whose value is read at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    new client.Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  private renderHttp(): string {
    const lines = [
      '# HELP http_requests_total HTTP requests by method, route pattern and status',
      '# TYPE http_requests_total counter',
    ];
    for (const s of this.series.values()) {
      const labels = `method="${escapeLabel(s.method)}",route="${escapeLabel(s.route)}"`;
      for (const [status, n] of s.statuses) lines.push(`http_requests_total{${labels},status="${status}"} ${n}`);
    }
    lines.push('# HELP http_request_duration_seconds HTTP request latency from first byte to response written', '# TYPE http_request_duration_seconds histogram');
    for (const s of this.series.values()) {
      const labels = `method="${escapeLabel(s.method)}",route="${escapeLabel(s.route)}"`;
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        lines.push(`http_request_duration_seconds_bucket{${labels},le="${le}"} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`);
      lines.push(`http_request_duration_seconds_sum{${labels}} ${s.sum}`);
      lines.push(`http_request_duration_seconds_count{${labels}} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: this.renderHttp() + (await this.registry.metrics()) };
  }
}
