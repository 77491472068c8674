/**
 * What the bench runner needs from one target. A target owns its processes: `start()` brings
 * them up on free loopback ports and resolves once they take traffic, and the `stop()` it
 * returns takes them down again. Adding a target (the fleet, a direct NATS request, one vs two
 * workers) is one file under `targets/` plus a line in `targets/index.ts`.
 */
export interface BenchTarget {
  /** Short, stable id used in results and in `--targets`. */
  name: string;
  /** One line: what this target measures. */
  description: string;
  /** How this target is judged against another target of the same run (issue 4's goals). */
  goal?: BenchGoal;
  /** More goals, judged like `goal` (a schedule run has three absolute ceilings). */
  goals?: BenchGoal[];
  /**
   * Measured seconds when `--duration` is not given (default: the runner's 10): a target whose
   * events come every few seconds (schedules) needs minutes to say anything.
   */
  defaultDurationSecs?: number;
  /**
   * Unmeasured seconds before the run when `--warmup` is not given (default 3). A target that
   * sends few requests (one caller) needs longer for V8 to have compiled its hot paths: after 3 s
   * it is still measuring the compiler (docs/performance.md "Warm-up of the one-caller targets").
   */
  defaultWarmupSecs?: number;
  start(options: StartOptions): Promise<StartedTarget>;
}

export interface StartOptions {
  /** Extra Node flags for the processes under test (e.g. `--cpu-prof`); empty for a plain run. */
  nodeFlags: string[];
}

/** The HTTP request autocannon repeats; headers and body are known only once the target is up. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface StartedTarget {
  /**
   * Base URLs (`http://127.0.0.1:<port>`). More than one (a fleet of api nodes) and autocannon
   * spreads the connections over them round-robin.
   */
  urls: string[];
  /**
   * Processes whose memory is read right after the run: each one's RSS is reported, and the sum
   * is the target's. Stand-ins for outside services (the model stand-in) are left out.
   */
  processes: BenchProcess[];
  request: BenchRequest;
  /**
   * A target that is not an HTTP endpoint (a direct NATS request) measures itself instead of
   * being driven by autocannon; it reports the same shape.
   */
  measure?: (settings: LoadSettings) => Promise<LoadResult>;
  stop(): Promise<void>;
}

/** One process of a target, named by its role (`api-1`, `agent-worker-2`, `nats-server`, ...). */
export interface BenchProcess {
  role: string;
  pid: number;
  /**
   * Count its children too: the ones alive when read, and (through the process's own
   * `cutime`/`cstime`) the ones it has reaped. PostgreSQL's postmaster, whose backends do the work.
   */
  withChildren?: boolean;
}

/**
 * A comparison with another target (a throughput ratio floor or a p50 latency ceiling), or an
 * absolute ceiling on one number of the target's own result: `latencyP99Ms`, or one of its
 * `details` (`detail:missed`).
 */
export type BenchGoal =
  | { kind: 'throughput-ratio'; against: string; atLeast: number; label: string }
  | { kind: 'added-p50-ms'; against: string; atMost: number; label: string }
  | { kind: 'at-most'; metric: 'latencyP50Ms' | 'latencyP99Ms' | 'rssMb' | `detail:${string}`; atMost: number; label: string };

export interface LoadSettings {
  connections: number;
  durationSecs: number;
  pipelining: number;
}

/** One measured run: throughput, latency and everything that makes it invalid. */
export interface LoadResult {
  requests: number;
  throughputRps: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /**
   * Named numbers a self-measuring target reports beside its load, in the report's own table
   * (a schedule run: slots expected, fired, duplicated, missed). A target with details is not a
   * request load: its "vs baseline" ratio is not computed.
   */
  details?: Record<string, number>;
}
