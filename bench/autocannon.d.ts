/**
 * The part of autocannon's programmatic API the bench uses (the package ships no types).
 * Called without a callback, `autocannon(options)` can be awaited for the aggregated result.
 */
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      /** One URL, or several: connections are spread over them round-robin. */
      url: string | string[];
      connections?: number;
      /** Seconds. */
      duration?: number;
      pipelining?: number;
      /** Seconds a request may take before it counts as a timeout. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** A sequence each connection cycles through (the path, method and headers of each), instead of one request. */
      requests?: Array<{ method?: string; path: string; headers?: Record<string, string>; body?: string }>;
    }
    interface Histogram {
      average: number;
      mean: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      latency: Histogram;
      /** Per-second samples of completed requests; `total` is every completed request. */
      requests: Histogram;
      statusCodeStats: Record<string, { count: number }>;
    }
  }
  /**
   * A running load: an event emitter that is also a promise of the result. `response` fires per
   * answer with the latency in fractional milliseconds (the result's histogram keeps whole ms).
   */
  interface Instance extends PromiseLike<autocannon.Result> {
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, bytes: number, latencyMs: number) => void,
    ): this;
  }
  function autocannon(options: autocannon.Options): Instance;
  export = autocannon;
}
