import { CONNECTOR_IDS } from '@agent-platform/contracts';
import { compileCarrierPattern } from '@agent-platform/privacy';
import { parseTrustedKey } from '@agent-platform/registry-core';
import { isHostName, isIpOrCidr, readListenAddress } from './listen-address.ts';
import { dashboardProblems } from './dashboard-checks.ts';
import { oidcProblems } from './oidc-checks.ts';
import { keyPath } from './schema-errors.ts';

type Table = Record<string, unknown>;

/**
 * Rules the schema cannot express: address syntax, cross-key constraints, references between
 * sections. Runs on the defaulted file even when the schema found faults, so that one refusal
 * lists everything; each rule therefore checks the types it reads instead of trusting them.
 */
export function semanticProblems(file: Table): string[] {
  const server = table(file.server);
  const problems = [
    ...listenProblems('server.listen', server.listen),
    ...listenProblems('registry.listen', table(file.registry).listen),
    ...allowedIpProblems(server),
    ...trustedProxyProblems(server),
    ...allowedHostProblems(server),
    ...corsProblems(table(server.cors)),
    ...authProblems(table(file.auth)),
    ...licenceProblems(table(file.licence)),
    ...providerProblems(file.providers),
    ...modelProblems(table(file.models).default, file.providers),
    ...modelCallProblems(table(file.model_calls)),
    ...connectorProblems(table(table(file.connectors).urls)),
    ...catalogProblems(table(file.catalog)),
    ...trustedKeyProblems('backup.trusted_keys', table(file.backup).trusted_keys),
    ...gatewayProblems(table(file.gateway), file.providers),
    ...retentionProblems(table(file.retention), table(table(file.audit).checkpoints)),
    ...metricsListenProblems(table(file.telemetry).metrics_listen),
    ...dashboardProblems(table(file.dashboard)),
  ];
  return problems;
}

function table(value: unknown): Table {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Table) : {};
}

function listenProblems(key: string, value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const parsed = readListenAddress(value);
  return typeof parsed === 'string' ? [`${key}: ${parsed}`] : [];
}

/** `[telemetry] metrics_listen`: empty (none) or a listen address, as `server.listen`. */
function metricsListenProblems(value: unknown): string[] {
  return value === '' ? [] : listenProblems('telemetry.metrics_listen', value);
}

function allowedIpProblems(server: Table): string[] {
  if (!Array.isArray(server.allowed_ips)) return [];
  const problems = server.allowed_ips.flatMap((entry: unknown, i) =>
    typeof entry === 'string' && !isIpOrCidr(entry)
      ? [`server.allowed_ips[${i}]: "${entry}" is not an IP address or CIDR block (e.g. "10.0.0.0/8")`]
      : [],
  );
  if (server.allowed_ips.length > 0 && typeof server.listen === 'string' && server.listen.startsWith('unix:')) {
    // Spec §Limits: a unix socket has no client IP to check.
    problems.push('server.allowed_ips: cannot be combined with a unix socket listen address (server.listen)');
  }
  return problems;
}

function trustedProxyProblems(server: Table): string[] {
  if (!Array.isArray(server.trusted_proxies)) return [];
  return server.trusted_proxies.flatMap((entry: unknown, i) =>
    typeof entry === 'string' && entry !== 'unix' && !isIpOrCidr(entry)
      ? [`server.trusted_proxies[${i}]: "${entry}" is not an IP address, a CIDR block or "unix" (the peers of a unix-socket listener)`]
      : [],
  );
}

function allowedHostProblems(server: Table): string[] {
  if (!Array.isArray(server.allowed_hosts)) return [];
  return server.allowed_hosts.flatMap((entry: unknown, i) =>
    typeof entry === 'string' && !isHostName(entry)
      ? [`server.allowed_hosts[${i}]: "${entry}" is not a host name (no scheme, port or path: e.g. "agents.example.com")`]
      : [],
  );
}

function corsProblems(cors: Table): string[] {
  const wildcard = Array.isArray(cors.allowed_origins) && cors.allowed_origins.includes('*');
  // Browsers reject `Access-Control-Allow-Origin: *` together with credentials.
  return wildcard && cors.allow_credentials === true
    ? ['server.cors.allow_credentials: cannot be true while allowed_origins contains "*"; list the origins']
    : [];
}

function authProblems(auth: Table): string[] {
  const problems: string[] = [];
  problems.push(...oidcProblems(auth.mode, table(auth.oidc)));
  const limits = table(auth.rate_limit);
  if (
    typeof limits.base_backoff_secs === 'number' &&
    typeof limits.max_backoff_secs === 'number' &&
    limits.max_backoff_secs < limits.base_backoff_secs
  ) {
    problems.push(`auth.rate_limit.max_backoff_secs: must be >= base_backoff_secs (${limits.base_backoff_secs})`);
  }
  return problems;
}

function licenceProblems(licence: Table): string[] {
  // A licence cannot be verified without its key, and a key alone licenses nothing.
  if (licence.file !== undefined && licence.public_key_file === undefined) {
    return ['licence.public_key_file: required when licence.file is set'];
  }
  if (licence.public_key_file !== undefined && licence.file === undefined) {
    return ['licence.file: required when licence.public_key_file is set'];
  }
  return [];
}

/** The one model of the built-in provider (DECISIONS D6). */
const LOCAL_MODEL = 'echo';

function providerProblems(providers: unknown): string[] {
  if (!Array.isArray(providers)) return [];
  const problems: string[] = [];
  const firstIndex = new Map<string, number>();
  providers.forEach((item: unknown, i) => {
    const p = table(item);
    const at = `providers[${i}]`;
    if (typeof p.id !== 'string') return;
    const earlier = firstIndex.get(p.id);
    if (earlier !== undefined) problems.push(`${at}.id: "${p.id}" is already used by providers[${earlier}]`);
    else firstIndex.set(p.id, i);
    if (p.id === 'local' && p.kind !== undefined && p.kind !== 'local') {
      problems.push(`${at}.kind: the id "local" is reserved for the built-in kind "local"`);
    }
    if (p.id === 'local' && Array.isArray(p.models) && p.models.some((m) => m !== LOCAL_MODEL)) {
      problems.push(`${at}.models: the built-in provider "local" offers only "${LOCAL_MODEL}"`);
    }
    if (p.id !== 'local' && p.kind === undefined) problems.push(`${at}.kind: required for providers other than "local" (e.g. "openai")`);
    if (p.kind === 'openai' && p.base_url === undefined) problems.push(`${at}.base_url: required for kind "openai"`);
    if (p.id !== 'local' && p.delay_ms !== undefined) problems.push(`${at}.delay_ms: only the built-in "local" provider takes a delay`);
    if (typeof p.base_url === 'string' && !isHttpUrl(p.base_url)) problems.push(`${at}.base_url: must be an http:// or https:// URL`);
  });
  return problems;
}

function modelProblems(model: unknown, providers: unknown): string[] {
  if (typeof model !== 'string') return [];
  const match = /^([^/\s]+)\/(\S+)$/.exec(model);
  if (match === null) return [`models.default: must be "provider/model", e.g. "local/echo" (got "${model}")`];
  const [, providerId, modelName] = match;
  if (providerId === 'local' && modelName !== LOCAL_MODEL) {
    return [`models.default: the built-in provider "local" offers only the model "${LOCAL_MODEL}" (got "${modelName}")`];
  }
  const configured = Array.isArray(providers) ? providers.map(table) : [];
  const provider = configured.find((p) => p.id === providerId);
  if (provider === undefined && providerId !== 'local') {
    return [`models.default: provider "${providerId}" is not configured; add a [[providers]] table with id = "${providerId}"`];
  }
  const offered = provider?.models;
  if (Array.isArray(offered) && modelName !== undefined && !offered.includes(modelName)) {
    return [`models.default: provider "${providerId}" offers no model "${modelName}" (its models: ${offered.join(', ')})`];
  }
  return [];
}

function modelCallProblems(calls: Table): string[] {
  const { llm_retry_base_delay_ms: base, llm_retry_max_delay_ms: max } = calls;
  return typeof base === 'number' && typeof max === 'number' && max < base
    ? [`model_calls.llm_retry_max_delay_ms: must be >= llm_retry_base_delay_ms (${base})`]
    : [];
}

function connectorProblems(urls: Table): string[] {
  return Object.entries(urls).flatMap(([id, url]) => {
    const key = keyPath(['connectors', 'urls', id]);
    if (!CONNECTOR_IDS.includes(id)) return [`${key}: unknown connector '${id}'; the connectors are ${CONNECTOR_IDS.join(', ')}`];
    return typeof url === 'string' && !isHttpUrl(url) ? [`${key}: must be an http:// or https:// URL`] : [];
  });
}

/** The registry installs by name come from, and the keys whose signatures they must carry (docs/catalog.md). */
function catalogProblems(catalog: Table): string[] {
  const problems: string[] = [];
  const url = catalog.registry_url;
  if (typeof url === 'string' && url !== '' && !isHttpUrl(url)) problems.push('catalog.registry_url: must be an http:// or https:// URL (or empty: no registry)');
  return [...problems, ...trustedKeyProblems('catalog.trusted_keys', catalog.trusted_keys)];
}

/** Public keys as `[catalog]` and `[backup] trusted_keys` take them: a key that does not parse refuses the boot. */
function trustedKeyProblems(key: string, keys: unknown): string[] {
  if (!Array.isArray(keys)) return [];
  return keys.flatMap((text: unknown, i) => {
    if (typeof text !== 'string') return [];
    try {
      parseTrustedKey(text);
      return [];
    } catch (error) {
      return [`${key}[${i}]: ${error instanceof Error ? error.message : String(error)}`];
    }
  });
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === 'http:' || protocol === 'https:';
}

/**
 * `[gateway]` (docs/privacy-gateway.md): the carrier's patterns must compile (a typo would otherwise
 * fail every model call), and `local_model` must name a model of a local-eligible provider (a
 * forced-local target in the cloud pool would defeat the policy).
 */
function gatewayProblems(gateway: Table, providers: unknown): string[] {
  const problems: string[] = [];
  for (const key of ['policy_number_patterns', 'claim_number_patterns'] as const) {
    const patterns = gateway[key];
    if (!Array.isArray(patterns)) continue;
    patterns.forEach((pattern: unknown, i) => {
      if (typeof pattern !== 'string') return;
      try {
        compileCarrierPattern(pattern);
      } catch (error) {
        problems.push(`gateway.${key}[${i}]: not a usable regular expression: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }
  const target = gateway.local_model;
  if (typeof target !== 'string' || target === '') return problems;
  const match = /^([^/\s]+)\/(\S+)$/.exec(target);
  if (match === null) return [...problems, `gateway.local_model: must be "provider/model", e.g. "vllm/llama3" (got "${target}")`];
  const [, providerId, modelName] = match;
  const configured = Array.isArray(providers) ? providers.map(table) : [];
  const provider = configured.find((p) => p.id === providerId);
  if (providerId === 'local') {
    if (modelName !== LOCAL_MODEL) problems.push(`gateway.local_model: the built-in provider "local" offers only the model "${LOCAL_MODEL}"`);
    return problems;
  }
  if (provider === undefined) return [...problems, `gateway.local_model: provider "${providerId}" is not configured`];
  if (provider.local_eligible !== true) {
    problems.push(`gateway.local_model: provider "${providerId}" is not local-eligible; set local_eligible = true in its [[providers]] table if personal data may go there`);
  }
  if (Array.isArray(provider.models) && !provider.models.includes(modelName)) {
    problems.push(`gateway.local_model: provider "${providerId}" offers no model "${modelName}" (its models: ${provider.models.join(', ')})`);
  }
  return problems;
}

/**
 * Audit entries leave the live store only once archived to the checkpoint sink as verifiable
 * segments (docs/retention.md "The audit archive"): audit retention without a sink is refused.
 */
function retentionProblems(retention: Table, checkpoints: Table): string[] {
  const days = retention.audit_days;
  if (typeof days !== 'number' || days <= 0) return [];
  const hasSink = (typeof checkpoints.sink === 'string' && checkpoints.sink !== '') || checkpoints.s3 !== undefined;
  return hasSink
    ? []
    : [
        `retention.audit_days: ${days} needs an archive for the expired entries: set [audit.checkpoints] sink (a directory) or [audit.checkpoints.s3]; ` +
          'audit entries are archived there as signed, verifiable segments before they leave the store (docs/retention.md). Use 0 to keep every entry.',
      ];
}
