import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Endpoints "Health and daemon control". The spec shows only some of these
 * payloads; the rest are documented in docs/http.md.
 */

const EngineHealth = Type.Object({
  kind: Type.String({ description: 'Adapter technology: embedded, nats, mongodb, bullmq.' }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  detail: Type.Optional(Type.String({ description: 'Why the engine is down.' })),
});

/** GET /health (public): 200 when every engine is up, 503 `degraded` otherwise. */
export const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String({ description: 'The platform version.' }),
  uptime_secs: Type.Integer({ minimum: 0 }),
  engines: Type.Object({ store: EngineHealth, bus: EngineHealth, queue: EngineHealth }),
});
export type Health = Static<typeof Health>;

/** GET /config: the config file's text with secrets redacted; null when started without a file. */
export const ConfigView = Type.Object({ config: Type.Union([Type.String(), Type.Null()]) });
export type ConfigView = Static<typeof ConfigView>;

/** POST /config/reload. */
export const ConfigReloaded = Type.Object({
  status: Type.Literal('reloaded'),
  restart_required: Type.Array(Type.String(), { description: 'Changed keys that only apply after a restart.' }),
});
export type ConfigReloaded = Static<typeof ConfigReloaded>;

/** POST /shutdown: 202, the process stops once in-flight requests finished. */
export const ShutdownAccepted = Type.Object({ status: Type.Literal('shutting_down') });
export type ShutdownAccepted = Static<typeof ShutdownAccepted>;

export const LogsQuery = Type.Object(
  { lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 100, description: 'How many recent lines (default 100).' })) },
  { additionalProperties: false },
);
export type LogsQuery = Static<typeof LogsQuery>;

/** GET /logs: recent log lines (JSON text each), oldest first. */
export const LogsView = Type.Object({ lines: Type.Array(Type.String()) });
export type LogsView = Static<typeof LogsView>;

/** GET /status: what is running, where, since when. */
export const DaemonStatus = Type.Object({
  version: Type.String(),
  pid: Type.Integer(),
  started_at: Type.String({ description: 'ISO 8601 UTC.' }),
  uptime_secs: Type.Integer({ minimum: 0 }),
  auth_mode: Type.Union([Type.Literal('disabled'), Type.Literal('local'), Type.Literal('oidc')]),
  surfaces: Type.Object({ api: Type.Boolean(), registry: Type.Boolean(), mcp: Type.Boolean(), dashboard: Type.Boolean() }),
  runtime: Type.Object({ bus: Type.String(), store: Type.String(), queue: Type.String() }),
  listen: Type.String({ description: 'The configured [server] listen value.' }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'The bound address, null when not listening.' }),
  tls: Type.Boolean(),
});
export type DaemonStatus = Static<typeof DaemonStatus>;
