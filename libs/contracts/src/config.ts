import { Type, type Static } from 'typebox';
import { Role } from './roles.ts';
import { DEFAULT_PII_CATEGORIES, PiiCategory } from './privacy.ts';

/**
 * The TOML config file (DECISIONS D2), validated at boot as one schema. Unknown keys are refused
 * (`additionalProperties: false`) so that a typo names itself instead of being ignored. Defaults
 * are filled by `@agent-platform/config`. Each key documents why it exists; docs/config.md is
 * the user-facing reference and is checked against this schema by a test.
 */
const strict = { additionalProperties: false } as const;

const Positive = (description: string, dflt: number) => Type.Integer({ minimum: 1, default: dflt, description });

/** A table that may be left out of the file entirely: every key then takes its default. */
const section = (description: string) => ({ ...strict, default: {}, description }) as const;

/** Names an environment variable; a pattern so that a pasted secret is refused instead of kept. */
const EnvName = (description: string, dflt?: string) =>
  Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description, ...(dflt === undefined ? {} : { default: dflt }) });

export const CorsConfig = Type.Object(
  {
    allowed_origins: Type.Array(Type.String(), { default: [], description: 'Origins allowed to call the api from a browser; "*" for any.' }),
    allow_credentials: Type.Boolean({ default: false, description: 'Whether browsers may send credentials cross-origin.' }),
    max_age_secs: Type.Integer({ minimum: 0, default: 600, description: 'How long browsers cache a preflight answer.' }),
  },
  { ...strict, description: 'Optional: present = CORS answered for the listed origins; absent = no CORS headers.' },
);

export const TlsConfig = Type.Object(
  {
    cert_file: Type.String({ minLength: 1, description: 'PEM certificate chain served by the api listener.' }),
    key_file: Type.String({ minLength: 1, description: 'PEM private key of that certificate.' }),
  },
  { ...strict, description: 'Optional: present = the api listener speaks HTTPS.' },
);

export const ServerConfig = Type.Object(
  {
    listen: Type.String({ default: '127.0.0.1:4200', description: 'host:port, or unix:/path/to.sock.' }),
    body_limit_bytes: Positive('Largest declared request body accepted (413 above).', 10485760),
    request_timeout_secs: Positive('Requests running longer are cut off with 408.', 600),
    allowed_ips: Type.Array(Type.String(), { default: [], description: 'Client IPs or CIDRs allowed; empty = all.' }),
    allowed_hosts: Type.Array(Type.String(), {
      default: [],
      description: 'Host names accepted besides loopback names and IP addresses while [auth] mode = "disabled" (DNS rebinding guard).',
    }),
    trusted_proxies: Type.Array(Type.String(), {
      default: [],
      description: 'Proxies (IPs, CIDRs, or "unix" for unix-socket peers) whose X-Forwarded-For names the client; empty = the peer is the client.',
    }),
    cors: Type.Optional(CorsConfig),
    tls: Type.Optional(TlsConfig),
  },
  section('The api listener: address, limits, allowlist, CORS and TLS.'),
);

export const SurfacesConfig = Type.Object(
  {
    api: Type.Boolean({ default: true, description: 'Serve the HTTP api.' }),
    registry: Type.Boolean({ default: false, description: 'Serve the package registry on [registry] listen.' }),
    mcp: Type.Boolean({ default: false, description: 'Mount the MCP surface at /mcp.' }),
    dashboard: Type.Boolean({ default: false, description: 'Mount the dashboard at /dashboard.' }),
  },
  section('Which surfaces this process serves.'),
);

export const RegistryS3Config = Type.Object(
  {
    bucket: Type.String({ minLength: 1, description: 'Bucket holding the archives.' }),
    endpoint: Type.String({ default: '', description: 'S3-compatible endpoint URL; empty = AWS for the region.' }),
    region: Type.String({ default: 'us-east-1', description: 'Bucket region (signing needs one even off AWS).' }),
    access_key_id: Type.String({ default: '', description: 'Access key id; empty = the AWS SDK default credential chain.' }),
    secret_access_key: Type.String({ default: '', description: 'Secret of that access key; never logged or shown (GET /config redacts it).' }),
    prefix: Type.String({ default: '', description: 'Key prefix of every archive object (for a bucket shared with other data).' }),
    path_style: Type.Boolean({ default: false, description: 'Path-style URLs (bucket in the path): most S3-compatible servers need it.' }),
  },
  { ...strict, description: 'Optional: present = archives live in this S3-compatible bucket instead of archive_dir.' },
);

export const RegistryAuthConfig = Type.Object(
  {
    mode: Type.Union([Type.Literal('disabled'), Type.Literal('local'), Type.Literal('oidc')], {
      default: 'disabled',
      description: 'disabled (anonymous registry admin; loopback only), local (registry keys) or oidc (issuers of /admin/issuers).',
    }),
    download_requires_auth: Type.Boolean({ default: false, description: 'Archive downloads need an identity (private registries).' }),
    read_requires_auth: Type.Boolean({ default: false, description: 'Metadata reads (packages, search, collections) need an identity.' }),
    allow_insecure_no_auth: Type.Boolean({ default: false, description: 'Allow mode disabled on a non-loopback bind.' }),
    allow_local_keys: Type.Boolean({ default: true, description: 'In oidc mode, also accept registry keys (for CI publishers).' }),
  },
  section('Who may use the registry (spec §Registry surface "Registry auth settings"; docs/registry.md).'),
);

export const RegistryConfig = Type.Object(
  {
    listen: Type.String({ default: '127.0.0.1:4210', description: 'Registry listener address: host:port, or unix:/path.' }),
    archive_dir: Type.String({ default: '', description: 'Where archives are kept without [registry.s3]; empty = <data_dir>/registry/archives.' }),
    signing_key_file: Type.String({
      default: '',
      description: 'PEM Ed25519 private key that signs every accepted version; empty = <data_dir>/registry/signing-key.pem, made at first start.',
    }),
    max_archive_bytes: Positive('Largest archive POST /packages accepts (413 above).', 10485760),
    s3: Type.Optional(RegistryS3Config),
    auth: RegistryAuthConfig,
  },
  section('The package registry surface (served when surfaces.registry = true, or by apps/registry).'),
);

export const CatalogConfig = Type.Object(
  {
    registry_url: Type.String({ default: '', description: 'Registry that install by name, search and revocations use (http(s) URL); empty = none.' }),
    registry_key_env: Type.Optional(EnvName('Environment variable holding the registry key or token sent to the registry; unset = anonymous.')),
    trusted_keys: Type.Array(Type.String(), {
      default: [],
      description: 'Registry signing keys whose signatures installs accept ("ed25519:<base64url>", as GET /signing-key shows); empty = nothing installs by name.',
    }),
    revocation_poll_secs: Positive('How often the revocation feed is polled when the registry does not share this bus.', 30),
    request_timeout_ms: Positive('A registry call with no answer after this long fails with 502.', 10000),
  },
  section('Installing by name from a registry, and the revocations it publishes (docs/catalog.md).'),
);

export const StorageConfig = Type.Object(
  {
    data_dir: Type.String({
      default: './.agent-platform',
      description: 'Embedded store, vault key, archives, backups and logs live here.',
    }),
    durability: Type.Union([Type.Literal('full'), Type.Literal('normal')], {
      default: 'full',
      description:
        'Embedded store: "full" syncs every commit to disk (acknowledged writes survive a power loss); "normal" only at checkpoints (a process crash loses nothing, an OS crash may lose the last commits).',
    }),
  },
  section('Where the platform keeps its files.'),
);

export const RuntimeConfig = Type.Object(
  {
    bus: Type.Union([Type.Literal('embedded'), Type.Literal('nats')], { default: 'embedded', description: 'Message bus engine.' }),
    store: Type.Union([Type.Literal('embedded'), Type.Literal('mongodb'), Type.Literal('postgres')], {
      default: 'embedded',
      description: 'Document store engine.',
    }),
    queue: Type.Union([Type.Literal('embedded'), Type.Literal('bullmq')], { default: 'embedded', description: 'Job queue engine.' }),
    nats_url: Type.String({ default: 'nats://127.0.0.1:4222', description: 'NATS server for bus = "nats".' }),
    mongodb_url: Type.String({ default: 'mongodb://127.0.0.1:27017/agent_platform', description: 'MongoDB for store = "mongodb".' }),
    postgres_url: Type.String({
      default: 'postgres://127.0.0.1:5432/agent_platform',
      description:
        'PostgreSQL for store = "postgres"; several URLs separated by "," (each starting postgres://) are tried in order when a connection cannot be made (failover). TLS as node-postgres reads it from the URL (sslmode, sslrootcert, sslcert, sslkey): docs/postgres.md.',
    }),
    postgres_password_env: Type.Optional(
      EnvName('Environment variable holding the PostgreSQL password; overrides any password in postgres_url.'),
    ),
    postgres_pool_size: Positive('Connections each process keeps to PostgreSQL at most (per URL).', 10),
    postgres_statement_timeout_ms: Positive(
      'PostgreSQL statement_timeout of the store\'s connections: a statement running longer (a lock held elsewhere, a stuck server) is cancelled and the operation rejects.',
      30_000,
    ),
    postgres_prepared_statements: Type.Boolean({
      default: true,
      description:
        'Send the store\'s statements by name, parsed and planned once per connection; false for a connection pooler that cannot keep named statements (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).',
    }),
    redis_url: Type.String({ default: 'redis://127.0.0.1:6379', description: 'Redis for queue = "bullmq".' }),
    queue_job_lock_secs: Positive(
      'How long a running job is held without renewal before another process takes it over (a worker that died mid-job): BullMQ lockDuration and stalled check, the embedded lease.',
      30,
    ),
  },
  section('Engines behind the bus, store and queue ports: embedded (one process) or external services.'),
);

export const AuthRateLimitConfig = Type.Object(
  {
    base_backoff_secs: Positive('First lockout after too many failed attempts; doubles each further failure.', 1),
    max_backoff_secs: Positive('Longest lockout.', 300),
    max_failed_attempts: Positive('Failed attempts from one client allowed before lockouts begin.', 10),
  },
  section('Backoff after failed authentication attempts.'),
);

export const AuthOidcConfig = Type.Object(
  {
    issuer: Type.String({ default: '', description: 'The OpenID provider: tokens must carry exactly this `iss`. Required in mode oidc.' }),
    audience: Type.String({ default: '', description: 'Tokens must name this in `aud` (the api\'s resource identifier). Required in mode oidc.' }),
    jwks_uri: Type.String({ default: '', description: 'Where the signing keys are; empty = discovered from `<issuer>/.well-known/openid-configuration`.' }),
    role_claim: Type.String({ default: '', description: 'Claim holding the external roles or groups (a name or a dotted path: `realm_access.roles`). Required in mode oidc.' }),
    allowed_algorithms: Type.Array(Type.String(), {
      default: ['RS256'],
      description: 'Token signature algorithms accepted; asymmetric only (RS*, PS*, ES*, EdDSA): `none` and HS* are refused at boot.',
    }),
    jwks_cache_ttl_secs: Positive('How long the fetched signing keys are kept before they are fetched again.', 300),
    refetch_cooldown_secs: Positive('Least time between two key fetches caused by tokens (an unknown `kid`): a flood of such tokens costs one fetch.', 30),
    clock_tolerance_secs: Type.Integer({ minimum: 0, maximum: 300, default: 30, description: 'Clock skew allowed on `exp` and `nbf`.' }),
    role_mapping: Type.Record(Type.String(), Role, {
      default: {},
      description: 'External role or group name to one of the six roles; a token none of whose values is mapped gets 403.',
    }),
  },
  section('External identity provider of auth mode oidc (spec §Authentication; docs/auth.md "OIDC").'),
);

export const AuthConfig = Type.Object(
  {
    mode: Type.Union([Type.Literal('disabled'), Type.Literal('local'), Type.Literal('oidc')], {
      default: 'disabled',
      description: 'disabled (anonymous admin), local (API keys) or oidc (bearer JWTs of [auth.oidc]).',
    }),
    allow_insecure_no_auth: Type.Boolean({ default: false, description: 'Allow mode disabled on a non-loopback bind.' }),
    allow_local_service_keys: Type.Boolean({ default: false, description: 'In oidc mode, also accept local API keys.' }),
    rate_limit: AuthRateLimitConfig,
    oidc: AuthOidcConfig,
  },
  section('How callers authenticate (spec §Authentication).'),
);

export const LicenceConfig = Type.Object(
  {
    file: Type.Optional(Type.String({ minLength: 1, description: 'The signed licence (a JWT).' })),
    public_key_file: Type.Optional(Type.String({ minLength: 1, description: 'PEM (SPKI) Ed25519 key that signed it.' })),
  },
  section('The signed carrier licence; without one every model invocation is refused.'),
);

export const ProviderConfig = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Provider id; "local" is built in.' }),
    kind: Type.Optional(
      Type.Union([Type.Literal('local'), Type.Literal('openai')], {
        description: 'Protocol spoken; required except for id "local".',
      }),
    ),
    base_url: Type.Optional(Type.String({ description: 'OpenAI-compatible endpoint; required for kind "openai".' })),
    api_key_env: Type.Optional(EnvName('Environment variable holding the API key (its name, never the key).')),
    models: Type.Optional(Type.Array(Type.String(), { description: 'Model names offered.' })),
    input_usd_per_mtok: Type.Optional(Type.Number({ minimum: 0, description: 'Price per million input tokens.' })),
    output_usd_per_mtok: Type.Optional(Type.Number({ minimum: 0, description: 'Price per million output tokens.' })),
    delay_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 600_000,
        description: 'Only for "local": the echo answers after this many milliseconds, to try timeouts, cancellation and crash recovery without a real model.',
      }),
    ),
    local_eligible: Type.Optional(
      Type.Boolean({
        description:
          'The provider runs where the carrier\'s personal data may go (a vLLM or Ollama on loopback or the private network): [gateway] forced_local may send requests with personal data to it. The built-in "local" always is.',
      }),
    ),
  },
  { ...strict, description: 'One model provider.' },
);

export const ModelsConfig = Type.Object(
  { default: Type.String({ default: 'local/echo', description: 'provider/model every agent uses.' }) },
  section('Model selection.'),
);

export const ModelCallsConfig = Type.Object(
  {
    request_timeout_secs: Positive('Longest one provider HTTP request may take, reply streamed to the end (then Timeout).', 600),
    connect_timeout_secs: Positive('Longest wait for a TCP connection to a provider (a dead host fails fast).', 30),
    llm_retry_max_attempts: Positive('Attempts per model call, the first included, on 429/5xx or a network error.', 10),
    llm_retry_base_delay_ms: Positive('Backoff before the first retry; doubles each retry (with jitter).', 1000),
    llm_retry_max_delay_ms: Positive('Longest backoff between two attempts, unless a retry-after header asks for more.', 60000),
    llm_retry_max_total_secs: Positive('No retry is started once waiting for it would end this long after the first attempt.', 300),
  },
  section('Timeouts and retries of calls to model providers (spec §Limits); sized to ride out multi-minute outages.'),
);

export const AgentsConfig = Type.Object(
  {
    rate_limit_per_minute: Positive(
      'Invocations one agent accepts per clock minute, across every node (429 RateLimited above).',
      120,
    ),
    session_max_turns: Positive('Turns (user and assistant messages) kept in an agent\'s canonical session as model context.', 40),
    session_max_bytes: Positive(
      'UTF-8 bytes of turns kept in an agent\'s canonical session (oldest dropped first); bounds what every model call is sent.',
      1048576,
    ),
    max_message_bytes: Positive(
      'Longest message (UTF-8 bytes) send, invoke and chat completions accept (413 SizeLimitExceeded above); must fit the bus payload.',
      262144,
    ),
    invocation_timeout_secs: Positive('Longest one invocation may run, tool loop included (then Timeout).', 300),
    worker_concurrency: Positive(
      'Invocations one agent worker runs at once; more wait on that worker in arrival order, within invocation_timeout_secs.',
      64,
    ),
    claim_lease_secs: Positive(
      "How long a running invocation's idempotency key stays claimed without a renewal: the worker renews it every third of this; a killed worker's key is free again within it.",
      5,
    ),
    idempotency_ttl_hours: Type.Integer({
      minimum: 24,
      default: 24,
      description: 'How long an invoke idempotency_key is remembered with its result (at least 24).',
    }),
  },
  section('Agent invocations: rate limit, session context, timeout, idempotency (docs/invocation.md).'),
);

export const WorkflowsConfig = Type.Object(
  {
    step_concurrency: Positive('Workflow steps one agent worker runs at once; more wait on the bus for a free worker.', 32),
    lease_secs: Positive(
      'A worker holding a step renews its lease every third of this; a step whose lease lapses (its worker died) is dispatched again.',
      3,
    ),
    sweep_interval_ms: Positive('How often each worker looks for steps to re-dispatch (lapsed leases, lost or delayed messages).', 1000),
    redispatch_after_secs: Positive(
      'A dispatched step that no worker has taken after this long is published again (its message may have been lost).',
      15,
    ),
    retry_backoff_ms: Positive('error_mode Retry: the wait before retry n is this times 2^(n-1).', 1000),
    retry_max_backoff_ms: Positive('error_mode Retry: the longest wait between two attempts of a step.', 60000),
  },
  section('Durable workflow runs: step leases, re-dispatch and retries (docs/workflows.md).'),
);

export const SchedulesConfig = Type.Object(
  {
    catchup_window_secs: Positive(
      'A slot found due later than this after its time (the scheduler was down) is counted missed, not fired; within it, one catch-up fire.',
      3600,
    ),
    fire_attempts: Positive('Attempts per slot, the first included, when a fire fails for a retryable reason (no worker, timeout).', 5),
    fire_backoff_ms: Positive('Wait before the first retry of a failed fire; doubles each retry.', 1000),
    fire_history_days: Positive('How long the outcome of each fire is kept for GET /schedules/{id}/fires.', 30),
  },
  section('Schedules and cron jobs: catch-up after downtime, retries, fire history (docs/schedules.md).'),
);

export const SkillsConfig = Type.Object(
  {
    starlark_max_steps: Positive(
      'Interpreter steps one starlark tool call (or install check) may take: stops a runaway loop inside the interpreter.',
      1000000,
    ),
    starlark_timeout_ms: Positive('Wall time one starlark tool call (or install check) may take before it is stopped.', 2000),
  },
  section('Skills: limits of the Starlark interpreter that runs starlark skill tools (docs/skills.md).'),
);

export const VaultConfig = Type.Object(
  {
    key_env: EnvName(
      'Environment variable holding the base64 32-byte vault key; else a 0600 key file in data_dir.',
      'AP_VAULT_KEY',
    ),
  },
  section('The credential vault key.'),
);

export const BackupConfig = Type.Object(
  {
    signing_key_file: Type.String({
      default: '',
      description: 'PEM Ed25519 private key that signs this platform\'s backup archives; empty = <data_dir>/backup-signing-key.pem, made at first start (0600).',
    }),
    trusted_keys: Type.Array(Type.String(), {
      default: [],
      description: 'Public keys ("ed25519:<base64url>" or PEM) of the platforms whose signed agents_only archives an admin may restore here as foreign; empty = no foreign archive is accepted.',
    }),
    import_dirs: Type.Array(Type.String(), {
      default: [],
      description: 'Directories besides <data_dir>/backups that POST /backup/restore {path} may read archives from; empty = the backups directory only.',
    }),
    dir: Type.String({
      default: '',
      description: 'The backups directory: archives made, listed and uploaded; empty = <data_dir>/backups. With several api nodes point every node at one shared volume or mount (docs/backup.md "Several api nodes").',
    }),
  },
  section('Signing of backup archives, and which archives a restore accepts (docs/backup.md "Foreign archives").'),
);

export const AuditCheckpointsConfig = Type.Object(
  {
    sink: Type.String({
      default: '',
      description: 'Directory the signed checkpoints are written to; empty = checkpoints off unless [audit.checkpoints.s3] is set.',
    }),
    interval_secs: Positive('Seconds between scheduled checkpoints (one per period across a fleet).', 3600),
    signing_key_file: Type.String({
      default: '',
      description: 'PEM Ed25519 private key that signs checkpoints; empty = <data_dir>/audit-checkpoint-key.pem, made at first start (0600).',
    }),
    object_lock_days: Type.Integer({
      minimum: 0,
      default: 0,
      description: 'With [audit.checkpoints.s3]: object-lock retention (COMPLIANCE mode) of each checkpoint, in days; 0 = none.',
    }),
    s3: Type.Optional(RegistryS3Config),
  },
  section('Signed checkpoints of the audit chain kept outside the store (docs/audit.md "Checkpoints").'),
);

export const AuditConfig = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: 'Keep the hash-chained audit trail.' }),
    max_query_limit: Positive('Largest `limit` accepted by GET /security/audit.', 1000),
    checkpoints: AuditCheckpointsConfig,
  },
  section('The tamper-evident audit trail.'),
);

export const LoggingConfig = Type.Object(
  {
    level: Type.Union(
      [
        Type.Literal('fatal'),
        Type.Literal('error'),
        Type.Literal('warn'),
        Type.Literal('info'),
        Type.Literal('debug'),
        Type.Literal('trace'),
        Type.Literal('silent'),
      ],
      { default: 'info', description: 'Log level.' },
    ),
    buffer_lines: Positive('Recent log lines kept in memory for GET /logs.', 2000),
  },
  section('Process logs.'),
);

export const NetworkConfig = Type.Object(
  {
    allow_private_targets: Type.Boolean({
      default: false,
      description: 'Allow outbound requests from API- or package-supplied URLs to private networks (D9).',
    }),
  },
  section('Outbound requests.'),
);

export const WebhooksConfig = Type.Object(
  {
    max_attempts: Positive('Attempts per event and webhook, the first included, before the delivery is dead-lettered.', 8),
    backoff_base_ms: Positive('Wait before the first retry of a failed delivery; doubles each retry (1 s, 2 s, 4 s ... about 2 min in all by default).', 1000),
    timeout_ms: Positive('Longest one delivery (or test) may take, connecting and reading the answer included.', 10000),
    max_response_bytes: Positive('Bytes of the receiver\'s answer read at most; the rest is not read (the connection is closed).', 65536),
    concurrency: Positive('Deliveries one process sends at once.', 8),
    log_retention_days: Positive('How long each attempt stays in the delivery log (GET /webhooks/{id}/deliveries).', 7),
  },
  section('Outbound webhooks: retries, limits of one request, the delivery log (docs/webhooks.md).'),
);

/**
 * `[channels]`: the bridge's settings. Channels themselves are records made through the api
 * (spec §Channel: "channel sections hand-written in the config file are ignored"), so any other
 * key here is accepted and ignored rather than refused (docs/channels.md).
 */
export const ChannelsConfig = Type.Object(
  {
    lease_ttl_secs: Positive('How long a channel bridge holds a channel without renewing: a dead bridge\'s channels move to another after at most this.', 5),
    reconnect_backoff_ms: Positive('Wait before a bridge reopens a channel whose adapter failed to open or reported an Error; doubles on each failure in a row.', 5000),
    reconnect_max_backoff_ms: Positive('Longest wait between two reopenings of a channel that keeps failing.', 300000),
    inbound_redelivery_secs: Positive(
      'How long an inbound message taken by an agent worker that then died waits before another worker answers it (the bus\'s ack wait; on NATS a live worker keeps its message however long its answer runs). On the embedded bus an answer running longer than this is started again beside it (answered once all the same): keep it above [agents] invocation_timeout_secs there.',
      300,
    ),
  },
  { additionalProperties: true, default: {}, description: 'Channel bridges (channels are created through the api; channel sections here are ignored).' },
);

export const IntegrationsConfig = Type.Object(
  {
    call_timeout_secs: Positive('Longest one integration tool call may take before it fails (a hung or dead server never hangs an agent).', 30),
    connect_timeout_secs: Positive('Longest starting an integration server and listing its tools may take on one worker.', 15),
    connect_wait_secs: Positive('How long POST /integrations/{id}/connect and reconnect wait for every live agent worker to report.', 10),
    restart_backoff_ms: Positive('Wait before restarting a server that died or failed to start; doubles on each failure in a row.', 500),
    restart_max_backoff_ms: Positive('Longest wait between two restarts of a failing server.', 30000),
    report_interval_secs: Positive(
      'How often each agent worker re-reads the desired states, pings its servers and refreshes its status rows.',
      5,
    ),
    report_stale_secs: Positive('A worker that has not refreshed its status rows for this long counts as gone in the fleet status.', 15),
    idempotent_keys: Type.Record(Type.String(), Type.Boolean(), {
      default: {},
      description:
        'By integration id: whether its server de-duplicates on the idempotency key it is sent, so a state-changing call whose outcome is unknown is made again with the same key instead of escalated (docs/tools.md); overrides the package\'s [standards] idempotent_keys.',
    }),
  },
  section('Integrations over MCP and REST adapters: call bound, restarts, fleet status, idempotency keys (docs/integrations.md).'),
);

export const ConnectorsConfig = Type.Object(
  {
    urls: Type.Record(Type.String(), Type.String(), {
      default: {},
      description: 'Reachability URL (http or https) by connector id (claims-system, crm, e-signature, object-store, payments, sso).',
    }),
    latency_budget_ms: Positive('A connector answering slower than this is reported Degraded (docs/connectors.md).', 1000),
    timeout_ms: Positive('A probe with no answer after this long is Unreachable; GET /connectors/health answers within it.', 5000),
  },
  section('Connector health checks.'),
);

/**
 * Default `[gateway] policy_number_patterns`: a `POL-123456` style prefix, and a number of at
 * least five digits right after the cue word "policy" (with an optional "number", "no.", "#"...).
 * A carrier with its own format replaces the list (docs/privacy-gateway.md "Policy and claim numbers").
 */
export const DEFAULT_POLICY_NUMBER_PATTERNS = [
  String.raw`\bPOL[-/ ]?\d{6,12}\b`,
  String.raw`\bpolicy(?:\s*(?:number|no\.?|num\.?|#|id|ref(?:erence)?))?\s*(?:(?:is\b|:|#|=)\s*)?(?<value>(?=(?:[A-Z/-]*\d){5})[A-Z0-9][A-Z0-9/-]{3,23}[A-Z0-9])\b`,
];

/** Default `[gateway] claim_number_patterns`: `CLM-2024-0042` style, and five or more digits after the cue word "claim". */
export const DEFAULT_CLAIM_NUMBER_PATTERNS = [
  String.raw`\bCLM[-/ ]?\d{4,12}(?:[-/]\d{2,8}){0,2}\b`,
  String.raw`\bclaim(?:\s*(?:number|no\.?|num\.?|#|id|ref(?:erence)?))?\s*(?:(?:is\b|:|#|=)\s*)?(?<value>(?=(?:[A-Z/-]*\d){5})[A-Z0-9][A-Z0-9/-]{3,23}[A-Z0-9])\b`,
];

export const GatewayConfig = Type.Object(
  {
    enabled: Type.Boolean({
      default: true,
      description: 'Replace personal data in every model request with tokens and put the values back into the reply; the provider never sees them.',
    }),
    categories: Type.Array(PiiCategory, {
      default: [...DEFAULT_PII_CATEGORIES],
      description:
        'Categories detected and tokenised (policy_number, claim_number, national_id, payment_card, bank_account, email, phone, date_of_birth, address, person_name); person_name, a heuristic and slower detector, only when listed.',
    }),
    forced_local: Type.Boolean({
      default: false,
      description: 'Send a request in which personal data was detected to a local-eligible model instead of [models] default.',
    }),
    local_model: Type.String({
      default: '',
      description: 'provider/model forced-local requests go to; empty = the first model of the first [[providers]] with local_eligible = true.',
    }),
    when_no_local: Type.Union([Type.Literal('refuse'), Type.Literal('send_tokenised')], {
      default: 'refuse',
      description: 'forced_local with personal data and no local-eligible model: refuse the request (PermissionDenied), or send it tokenised to the default model.',
    }),
    policy_number_patterns: Type.Array(Type.String({ minLength: 1 }), {
      default: DEFAULT_POLICY_NUMBER_PATTERNS,
      description: 'JavaScript regular expressions (case-insensitive) of this carrier\'s policy numbers; a named group "value" is the part tokenised.',
    }),
    claim_number_patterns: Type.Array(Type.String({ minLength: 1 }), {
      default: DEFAULT_CLAIM_NUMBER_PATTERNS,
      description: 'JavaScript regular expressions (case-insensitive) of this carrier\'s claim numbers; a named group "value" is the part tokenised.',
    }),
    traffic_retention_hours: Positive('How long each routing decision stays in GET /gateway/traffic (then it expires from the store).', 24),
  },
  section('The privacy gateway at every model call: tokens for personal data, local routing, audit (docs/privacy-gateway.md).'),
);

export const ComplianceConfig = Type.Object(
  {
    packs_dir: Type.String({
      default: '',
      description: 'Directory of carrier compliance packs (*.yaml, *.yml, *.json), read at boot and on POST /config/reload; empty = built-in packs only.',
    }),
    attestation_max_days: Positive('Longest validity (expires_at - now) a signed attestation of a manual control may be given.', 1096),
  },
  section('Compliance packs and reports, attestations of manual controls (docs/compliance.md).'),
);

const RetentionDays = (what: string) =>
  Type.Integer({ minimum: 0, default: 0, description: `Days ${what} are kept; 0 = kept forever (the default: nothing is deleted unless configured).` });

/** A claim, policy or case number: printable text, no control characters (docs/retention.md "Business keys"). */
export const BUSINESS_KEY_PATTERN = '^[^\\u0000-\\u001f\\u007f]+$';

export const RetentionConfig = Type.Object(
  {
    audit_days: RetentionDays('audit entries (by timestamp) stay in the live store; older ones are archived to the [audit.checkpoints] sink as verifiable segments, then removed. Needs a sink'),
    usage_days: RetentionDays('usage events (by `at`) are kept; never those of the current licence period'),
    transcripts_days: RetentionDays('channel transcript turns (by turn time) are kept'),
    runs_days: RetentionDays('terminal workflow runs (Completed, Failed, Escalated; by completed_at) are kept'),
    sweep_interval_secs: Positive('Seconds between retention sweeps (one sweep per period across a fleet; re-read per tick).', 3600),
    batch_size: Type.Integer({ minimum: 10, maximum: 10000, default: 1000, description: 'Items one sweep step reads or deletes at once (each step is one short write).' }),
    audit_segment_entries: Type.Integer({ minimum: 10, maximum: 1000000, default: 10000, description: 'Most audit entries in one archived segment object.' }),
    hold_agents: Type.Array(Type.String({ format: 'uuid' }), {
      default: [],
      description: 'Agent ids under legal hold: nothing of theirs is deleted whatever the periods (holds can also be added through POST /retention/holds).',
    }),
    hold_business_keys: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: BUSINESS_KEY_PATTERN }), {
      default: [],
      description: 'Business keys (claim, policy or case numbers) under legal hold: runs, transcripts, usage and audit entries carrying them are kept.',
    }),
  },
  section('Retention of audit, usage, transcripts and runs, with legal holds (docs/retention.md).'),
);

export const TelemetryConfig = Type.Object(
  {
    otlp_endpoint: Type.String({
      default: '',
      pattern: '^(https?://\\S+)?$',
      description: 'OTLP/HTTP traces URL of a collector (http://collector:4318/v1/traces); empty = tracing off, no SDK loaded (docs/observability.md).',
    }),
    service_name: Type.String({ default: '', description: 'service.name of this process\'s spans; empty = the process name (platform, api, agent-worker, scheduler, channel-bridge).' }),
    sampling_ratio: Type.Number({ minimum: 0, maximum: 1, default: 1, description: 'Share of new traces kept (0 to 1); a trace continued from another process follows its decision.' }),
    headers_env: Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]+$' }), EnvName('Environment variable holding the header value.'), {
      default: {},
      description: 'Headers sent with every export, each naming the environment variable that holds its value (never the value itself).',
    }),
    export_interval_ms: Positive('Longest a finished span waits in memory before it is exported (the batch delay).', 5000),
    metrics_listen: Type.String({
      default: '',
      description: 'host:port where this process serves GET /metrics without authentication (a worker, scheduler or bridge has no other listener); empty = none.',
    }),
  },
  section('Traces (OpenTelemetry over OTLP) and a metrics listener for every fleet process (docs/observability.md).'),
);

export const DashboardConfig = Type.Object(
  {
    oidc_client_id: Type.String({
      default: '',
      description:
        'Client id of the dashboard at the [auth.oidc] provider: a public client (no secret) with the authorization code flow, PKCE and the redirect URI <api origin>/dashboard/callback; empty = no provider sign-in button.',
    }),
    oidc_scopes: Type.Array(Type.String({ minLength: 1 }), { default: ['openid'], description: 'Scopes the dashboard asks the provider for at sign-in.' }),
    oidc_resource: Type.String({
      default: '',
      description: 'Resource indicator (RFC 8707) sent with the authorization and token requests, for providers that need it to issue a token for [auth.oidc] audience; empty = none sent.',
    }),
    connect_origins: Type.Array(Type.String(), {
      default: [],
      description: "Origins besides the issuer's that the browser calls at sign-in (a token endpoint on another host); added to the page's Content-Security-Policy connect-src.",
    }),
  },
  section('The dashboard at /dashboard (served when surfaces.dashboard = true; docs/dashboard.md).'),
);

export const PlatformConfig = Type.Object(
  {
    server: ServerConfig,
    surfaces: SurfacesConfig,
    registry: RegistryConfig,
    storage: StorageConfig,
    runtime: RuntimeConfig,
    auth: AuthConfig,
    licence: LicenceConfig,
    providers: Type.Array(ProviderConfig, {
      default: [],
      description: 'Model providers ([[providers]] tables); "local" is built in and need not be listed.',
    }),
    models: ModelsConfig,
    model_calls: ModelCallsConfig,
    agents: AgentsConfig,
    workflows: WorkflowsConfig,
    schedules: SchedulesConfig,
    skills: SkillsConfig,
    vault: VaultConfig,
    audit: AuditConfig,
    backup: BackupConfig,
    logging: LoggingConfig,
    network: NetworkConfig,
    webhooks: WebhooksConfig,
    integrations: IntegrationsConfig,
    connectors: ConnectorsConfig,
    channels: ChannelsConfig,
    catalog: CatalogConfig,
    gateway: GatewayConfig,
    compliance: ComplianceConfig,
    retention: RetentionConfig,
    telemetry: TelemetryConfig,
    dashboard: DashboardConfig,
  },
  strict,
);
export type PlatformConfig = Static<typeof PlatformConfig>;
