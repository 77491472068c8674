import { CONNECTOR_IDS } from '@agent-platform/contracts';
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
  if (Array.isArray(catalog.trusted_keys)) {
    catalog.trusted_keys.forEach((key: unknown, i) => {
      if (typeof key !== 'string') return;
      try {
        parseTrustedKey(key);
      } catch (error) {
        problems.push(`catalog.trusted_keys[${i}]: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }
  return problems;
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === 'http:' || protocol === 'https:';
}
