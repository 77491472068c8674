import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A monotonically increasing count. `labels` must name exactly the metric's label names. */
export interface CounterMetric {
  inc(labels?: Record<string, string>, value?: number): void;
}

/** A distribution of observed values (seconds, bytes, ...). */
export interface HistogramMetric {
  observe(labels: Record<string, string>, value: number): void;
}

/** A value read when Prometheus scrapes: `collect` returns the samples, one per label set. */
export type GaugeCollector = () => Promise<Array<{ labels?: Record<string, string>; value: number }>>;

export interface HttpRequestSample {
  method: string;
  /** The route pattern (`/agents/:id`), or `unmatched`: never the concrete URL, to bound cardinality. */
  route: string;
  status: number;
  seconds: number;
}

/**
 * Prometheus metrics of one running platform. Each instance owns its own registry (not
 * prom-client's global default), so several apps in one process, as in tests, never collide.
 */
export interface PlatformMetrics {
  /** Counts `http_requests_total` and observes `http_request_duration_seconds`. */
  observeHttpRequest(sample: HttpRequestSample): void;
  /** `audit_entries_total`: entries appended to the audit chain. */
  readonly auditEntriesTotal: CounterMetric;
  /** `auth_failures_total{reason}`: rejected credentials (missing, invalid, locked_out). */
  readonly authFailuresTotal: CounterMetric;
  /** `api_keys_created_total`: keys issued by creation or rotation. */
  readonly apiKeysCreatedTotal: CounterMetric;
  /** `vault_writes_total`: vault puts. */
  readonly vaultWritesTotal: CounterMetric;
  /** `config_reloads_total{result}`: POST /config/reload outcomes (`success`, `failure`). */
  readonly configReloadsTotal: CounterMetric;
  /** Registers (or returns the already registered) counter, for services that add their own. */
  counter(name: string, help: string, labelNames?: readonly string[]): CounterMetric;
  histogram(name: string, help: string, labelNames: readonly string[], buckets?: number[]): HistogramMetric;
  /**
   * Registers a gauge whose samples `collect` reads at each scrape (a budget read from the store).
   * A collector that throws leaves the gauge empty for that scrape: /metrics still answers.
   * Only a labelled gauge can be empty: prom-client shows an unlabelled one as 0 when it has no
   * sample, so a value that may be absent (no licence) needs a label.
   */
  gauge(name: string, help: string, labelNames: readonly string[], collect: GaugeCollector): void;
  /** The text exposition format, for GET /metrics. */
  render(): Promise<string>;
  /** `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
}

/**
 * prom-client's default metrics that `promtool check metrics` rejects: gauges named `_total`,
 * a suffix Prometheus keeps for counters. Each is the sum of the labelled gauge of the same name
 * without `_total` (`nodejs_active_handles{type}`), which stays, so nothing is lost.
 */
export const DROPPED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;

export function createMetrics(): PlatformMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  const counters = new Map<string, CounterMetric>();
  const histograms = new Map<string, HistogramMetric>();

  const counter = (name: string, help: string, labelNames: readonly string[] = []): CounterMetric => {
    const existing = counters.get(name);
    if (existing !== undefined) return existing;
    const c = new Counter({ name, help, labelNames: [...labelNames], registers: [registry] });
    const metric: CounterMetric = { inc: (labels, value = 1) => (labels === undefined ? c.inc(value) : c.inc(labels, value)) };
    counters.set(name, metric);
    return metric;
  };

  const histogram = (name: string, help: string, labelNames: readonly string[], buckets?: number[]): HistogramMetric => {
    const existing = histograms.get(name);
    if (existing !== undefined) return existing;
    const h = new Histogram({ name, help, labelNames: [...labelNames], registers: [registry], ...(buckets ? { buckets } : {}) });
    const metric: HistogramMetric = { observe: (labels, value) => h.observe(labels, value) };
    histograms.set(name, metric);
    return metric;
  };

  const httpLabels = ['method', 'route', 'status'] as const;
  const requests = counter('http_requests_total', 'HTTP requests answered.', httpLabels);
  const duration = histogram('http_request_duration_seconds', 'HTTP request duration in seconds.', httpLabels, [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600,
  ]);

  return {
    observeHttpRequest({ method, route, status, seconds }) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    auditEntriesTotal: counter('audit_entries_total', 'Entries appended to the audit trail.'),
    authFailuresTotal: counter('auth_failures_total', 'Rejected authentication attempts.', ['reason']),
    apiKeysCreatedTotal: counter('api_keys_created_total', 'API keys issued by creation or rotation.'),
    vaultWritesTotal: counter('vault_writes_total', 'Values written to the vault.'),
    configReloadsTotal: counter('config_reloads_total', 'Config reloads by result.', ['result']),
    counter,
    histogram,
    gauge(name, help, labelNames, collect) {
      if (registry.getSingleMetric(name) !== undefined) return;
      new Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers: [registry],
        async collect() {
          this.reset();
          const samples = await collect().catch(() => []);
          for (const { labels, value } of samples) {
            if (labels === undefined) this.set(value);
            else this.set(labels, value);
          }
        },
      });
    },
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
