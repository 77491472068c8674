import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { loadConfig, locateConfigFile, parseConfigText } from './load-config.ts';
import { defaultConfig } from './validate-config.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The problems of a refused file; fails the test when the file is accepted. */
function problemsOf(text: string): string[] {
  try {
    parseConfigText(text, join(dir, 'agent-platform.toml'));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('config was accepted');
}

describe('file resolution', () => {
  beforeEach(async () => {
    await writeFile(join(dir, 'agent-platform.toml'), '[server]\nlisten = "127.0.0.1:1001"\n');
    await writeFile(join(dir, 'env.toml'), '[server]\nlisten = "127.0.0.1:1002"\n');
    await writeFile(join(dir, 'flag.toml'), '[server]\nlisten = "127.0.0.1:1003"\n');
  });

  it('prefers --config over AP_CONFIG over ./agent-platform.toml', async () => {
    const env = { AP_CONFIG: 'env.toml' };
    const byFlag = await loadConfig({ argv: ['--config', 'flag.toml'], env, cwd: dir });
    expect([byFlag.source, byFlag.path, byFlag.config.server.listen]).toEqual(['flag', join(dir, 'flag.toml'), '127.0.0.1:1003']);
    const byEquals = await loadConfig({ argv: [`--config=${join(dir, 'flag.toml')}`], env, cwd: dir });
    expect(byEquals.source).toBe('flag');
    const byEnv = await loadConfig({ argv: [], env, cwd: dir });
    expect([byEnv.source, byEnv.config.server.listen]).toEqual(['env', '127.0.0.1:1002']);
    const byCwd = await loadConfig({ argv: [], env: { AP_CONFIG: '' }, cwd: dir });
    expect([byCwd.source, byCwd.config.server.listen]).toEqual(['cwd', '127.0.0.1:1001']);
    expect(byCwd.rawText).toContain('listen = "127.0.0.1:1001"');
  });

  it('refuses a --config or AP_CONFIG file that does not exist instead of running a first-run setup', async () => {
    await expect(loadConfig({ argv: ['--config', 'missing.toml'], env: {}, cwd: dir })).rejects.toThrow(/missing\.toml \(from --config\) does not exist/);
    await expect(loadConfig({ argv: [], env: { AP_CONFIG: 'gone.toml' }, cwd: dir })).rejects.toThrow(/gone\.toml \(from AP_CONFIG\)/);
    await expect(loadConfig({ argv: ['--config'], env: {}, cwd: dir })).rejects.toThrow('--config needs a file path');
  });

  it('reports first-run when there is no file anywhere, and loadConfig refuses then', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect(await locateConfigFile({ argv: [], env: {}, cwd: empty })).toEqual({ path: null, source: 'first-run' });
    await expect(loadConfig({ argv: [], env: {}, cwd: empty })).rejects.toThrow(/no config file/);
  });
});

describe('defaults and paths', () => {
  it('fills every section of an empty file with the defaults of D2', () => {
    const config = parseConfigText('', join(dir, 'agent-platform.toml'));
    expect(config.server).toEqual({ listen: '127.0.0.1:4200', body_limit_bytes: 10485760, request_timeout_secs: 600, allowed_ips: [], allowed_hosts: [], trusted_proxies: [] });
    expect(config.surfaces).toEqual({ api: true, registry: false, mcp: false, dashboard: false });
    expect(config.runtime.bus).toBe('embedded');
    expect(config.auth).toMatchObject({ mode: 'disabled', allow_insecure_no_auth: false, rate_limit: { base_backoff_secs: 1, max_backoff_secs: 300, max_failed_attempts: 10 } });
    expect(config.models.default).toBe('local/echo');
    expect(config.vault.key_env).toBe('AP_VAULT_KEY');
    expect(config.providers).toEqual([]);
    expect(config.server.cors).toBeUndefined();
  });

  it('fills the defaults of an optional table once it is present', () => {
    const config = parseConfigText('[server.cors]\nallowed_origins = ["https://app.example"]\n', join(dir, 'a.toml'));
    expect(config.server.cors).toEqual({ allowed_origins: ['https://app.example'], allow_credentials: false, max_age_secs: 600 });
  });

  it('resolves relative paths against the config file directory, not the working directory', () => {
    const text = [
      '[server]',
      'listen = "unix:run/ap.sock"',
      '[server.tls]',
      'cert_file = "tls/cert.pem"',
      'key_file = "/etc/ap/key.pem"',
      '[storage]',
      'data_dir = "./data"',
      '[licence]',
      'file = "../licences/acme.jwt"',
      'public_key_file = "keys/pub.pem"',
      '[registry]',
      'archive_dir = "archives"',
      'signing_key_file = "keys/registry.pem"',
    ].join('\n');
    const config = parseConfigText(text, '/srv/ap/conf/agent-platform.toml');
    expect(config.registry).toMatchObject({ archive_dir: '/srv/ap/conf/archives', signing_key_file: '/srv/ap/conf/keys/registry.pem' });
    // Empty means "the default under data_dir" and stays empty.
    expect(parseConfigText('', '/srv/ap/agent-platform.toml').registry).toMatchObject({ archive_dir: '', signing_key_file: '' });
    expect(config.storage.data_dir).toBe('/srv/ap/conf/data');
    expect(config.server.listen).toBe('unix:/srv/ap/conf/run/ap.sock');
    expect(config.server.tls).toEqual({ cert_file: '/srv/ap/conf/tls/cert.pem', key_file: '/etc/ap/key.pem' });
    expect(config.licence).toEqual({ file: '/srv/ap/licences/acme.jwt', public_key_file: '/srv/ap/conf/keys/pub.pem' });
    expect(parseConfigText('', '/srv/ap/agent-platform.toml').storage.data_dir).toBe('/srv/ap/.agent-platform');
  });

  it('resolves the audit checkpoint sink and key file, and the compliance packs_dir, against the config file directory', () => {
    const text = ['[audit.checkpoints]', 'sink = "audit-sink"', 'signing_key_file = "keys/checkpoint.pem"', '[compliance]', 'packs_dir = "packs"'].join('\n');
    const config = parseConfigText(text, '/srv/ap/conf/agent-platform.toml');
    expect(config.audit.checkpoints).toMatchObject({ sink: '/srv/ap/conf/audit-sink', signing_key_file: '/srv/ap/conf/keys/checkpoint.pem' });
    expect(config.compliance.packs_dir).toBe('/srv/ap/conf/packs');
    // Empty means "off" (the sink) or "the default under data_dir" (the key) and stays empty.
    expect(parseConfigText('', '/srv/ap/agent-platform.toml').audit.checkpoints).toMatchObject({ sink: '', signing_key_file: '' });
  });

  it('resolves a relative registry archive_dir against the config file directory and keeps an empty one empty', () => {
    const config = parseConfigText('[registry]\narchive_dir = "archives"', '/srv/ap/conf/agent-platform.toml');
    expect(config.registry.archive_dir).toBe('/srv/ap/conf/archives');
    expect(parseConfigText('', '/srv/ap/conf/agent-platform.toml').registry.archive_dir).toBe('');
    expect(parseConfigText('[registry]\narchive_dir = "/var/lib/ap"', '/srv/ap/x.toml').registry.archive_dir).toBe('/var/lib/ap');
  });

  it('defaultConfig() is the empty file with paths left as written', () => {
    expect(defaultConfig().storage.data_dir).toBe('./.agent-platform');
    expect(defaultConfig().logging.level).toBe('info');
  });
});

describe('refusals name the key', () => {
  it('names file, line and column of a TOML syntax error', () => {
    const path = join(dir, 'agent-platform.toml');
    let error: unknown;
    try {
      parseConfigText('[server]\nlisten = "127.0.0.1:1"\nbody_limit_bytes = = 3\n', path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(path);
    expect((error as ConfigError).problems[0]).toMatch(/^line 3, column 20: /);
  });

  it('lists every bad key of a file at once', () => {
    const problems = problemsOf('[server]\nbody_limit_bytes = 0\nrequest_timeout_secs = -1\n[auth]\nmdoe = "local"\n[surfaces]\napi = "yes"\n');
    expect(problems).toEqual([
      'server.body_limit_bytes: must be >= 1',
      'server.request_timeout_secs: must be >= 1',
      'surfaces.api: must be a boolean (got a string)',
      'auth.mdoe: unknown key (did you mean "mode"?)',
    ]);
  });

  it.each([
    ['unknown table', '[servr]\nlisten = "x"', 'servr: unknown key'],
    ['enumeration', '[runtime]\nstore = "cassandra"', 'runtime.store: must be one of "embedded", "mongodb", "postgres" (got "cassandra")'],
    ['table given a scalar', 'server = 3', 'server: must be a table (got an integer)'],
    ['missing required key', '[server.tls]\ncert_file = "c.pem"', 'server.tls.key_file: required key is missing'],
    ['array item type', '[server]\nallowed_ips = [1]', 'server.allowed_ips[0]: must be a string (got an integer)'],
    ['provider key', '[[providers]]\nid = "a"\nkind = "openai"\nbase_url = "http://h"\ncolour = 1', 'providers[0].colour: unknown key'],
    ['env var name', '[vault]\nkey_env = "s3cr3t value"', 'vault.key_env: must be an environment variable name'],
    ['listen without port', '[server]\nlisten = "0.0.0.0"', 'server.listen: must be host:port or unix:/path'],
    ['listen port range', '[server]\nlisten = "127.0.0.1:70000"', 'server.listen: port must be an integer from 0 to 65535'],
    ['listen host', '[server]\nlisten = "bad host!:80"', 'server.listen: "bad host!" is not an IPv4 address'],
    ['empty unix path', '[server]\nlisten = "unix:"', 'server.listen: unix: needs a socket path'],
    ['registry listen', '[registry]\nlisten = ":4210"', 'registry.listen: host is missing'],
    ['allowed_ips entry', '[server]\nallowed_ips = ["10.0.0.0/33"]', 'server.allowed_ips[0]: "10.0.0.0/33" is not an IP address or CIDR block'],
    ['allowed_ips with unix', '[server]\nlisten = "unix:/tmp/ap.sock"\nallowed_ips = ["10.0.0.1"]', 'server.allowed_ips: cannot be combined with a unix socket listen address'],
    ['allowed_hosts entry', '[server]\nallowed_hosts = ["http://a.example:80"]', 'server.allowed_hosts[0]: "http://a.example:80" is not a host name'],
    ['trusted_proxies entry', '[server]\ntrusted_proxies = ["proxy.internal"]', 'server.trusted_proxies[0]: "proxy.internal" is not an IP address, a CIDR block or "unix"'],
    ['oidc without its keys', '[auth]\nmode = "oidc"', 'auth.oidc: mode "oidc" needs auth.oidc.issuer, auth.oidc.audience, auth.oidc.role_claim'],
    ['oidc issuer url', '[auth.oidc]\nissuer = "http://idp.example"', 'auth.oidc.issuer: "http://idp.example" must be https (http only on a loopback host)'],
    ['oidc hmac', '[auth.oidc]\nallowed_algorithms = ["HS256"]', "auth.oidc.allowed_algorithms: algorithm 'HS256' is never allowed"],
    ['oidc role', '[auth.oidc.role_mapping]\nstaff = "superuser"', 'auth.oidc.role_mapping.staff'],
    ['backoff order', '[auth.rate_limit]\nbase_backoff_secs = 60\nmax_backoff_secs = 5', 'auth.rate_limit.max_backoff_secs: must be >= base_backoff_secs (60)'],
    ['cors wildcard with credentials', '[server.cors]\nallowed_origins = ["*"]\nallow_credentials = true', 'server.cors.allow_credentials: cannot be true'],
    ['licence without key', '[licence]\nfile = "l.jwt"', 'licence.public_key_file: required when licence.file is set'],
    ['key without licence', '[licence]\npublic_key_file = "k.pem"', 'licence.file: required when licence.public_key_file is set'],
    ['duplicate provider', '[[providers]]\nid = "a"\nkind = "openai"\nbase_url = "http://h"\n[[providers]]\nid = "a"\nkind = "openai"\nbase_url = "http://h"', 'providers[1].id: "a" is already used by providers[0]'],
    ['local reserved', '[[providers]]\nid = "local"\nkind = "openai"\nbase_url = "http://h"', 'providers[0].kind: the id "local" is reserved for the built-in kind "local"'],
    ['provider without kind', '[[providers]]\nid = "vllm"\nbase_url = "http://h"', 'providers[0].kind: required for providers other than "local"'],
    ['openai without url', '[[providers]]\nid = "oa"\nkind = "openai"', 'providers[0].base_url: required for kind "openai"'],
    ['base_url scheme', '[[providers]]\nid = "oa"\nkind = "openai"\nbase_url = "ftp://h"', 'providers[0].base_url: must be an http:// or https:// URL'],
    ['model form', '[models]\ndefault = "echo"', 'models.default: must be "provider/model"'],
    ['model provider', '[models]\ndefault = "openai/gpt-4o"', 'models.default: provider "openai" is not configured'],
    ['model offered', '[[providers]]\nid = "oa"\nkind = "openai"\nbase_url = "http://h"\nmodels = ["a"]\n[models]\ndefault = "oa/b"', 'models.default: provider "oa" offers no model "b"'],
    ['local model', '[models]\ndefault = "local/gpt"', 'models.default: the built-in provider "local" offers only the model "echo"'],
    ['local models list', '[[providers]]\nid = "local"\nmodels = ["echo", "big"]', 'providers[0].models: the built-in provider "local" offers only "echo"'],
    ['retry delay order', '[model_calls]\nllm_retry_base_delay_ms = 5000\nllm_retry_max_delay_ms = 100', 'model_calls.llm_retry_max_delay_ms: must be >= llm_retry_base_delay_ms (5000)'],
    ['model call timeout', '[model_calls]\nrequest_timeout_secs = 0', 'model_calls.request_timeout_secs: must be >= 1'],
    ['connector url', '[connectors.urls]\ncrm = "not a url"', 'connectors.urls.crm: must be an http:// or https:// URL'],
    ['connector scheme', '[connectors.urls]\ncrm = "tcp://crm:443"', 'connectors.urls.crm: must be an http:// or https:// URL'],
    ['connector id', '[connectors.urls]\ncrn = "https://crm.example"', "connectors.urls.crn: unknown connector 'crn'; the connectors are claims-system, crm"],
    ['connector timeout', '[connectors]\ntimeout_ms = 0', 'connectors.timeout_ms: must be >= 1'],
    ['registry url', '[catalog]\nregistry_url = "registry.internal:4210"', 'catalog.registry_url: must be an http:// or https:// URL'],
    ['trusted key length', '[catalog]\ntrusted_keys = ["ed25519:AAAA"]', 'catalog.trusted_keys[0]: trusted key ed25519:AAAA: an Ed25519 public key is 32 bytes, this one is 3'],
    ['trusted key form', '[catalog]\ntrusted_keys = ["ssh-ed25519 AAAAC3Nz"]', 'catalog.trusted_keys[0]: trusted key ssh-ed25519 AAAAC3Nz: expected "ed25519:<base64url>" as GET /signing-key shows it'],
  ])('%s', (_name, text, expected) => {
    expect(problemsOf(text).some((p) => p.startsWith(expected))).toBe(true);
  });

  it('accepts the full D2 example with a configured provider', () => {
    const text = [
      '[server]',
      'listen = "[::1]:4200"',
      'allowed_ips = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]',
      '[server.cors]',
      'allowed_origins = ["https://a.example"]',
      'allow_credentials = true',
      '[runtime]',
      'bus = "nats"',
      '[auth]',
      'mode = "local"',
      '[[providers]]',
      'id = "local"',
      '[[providers]]',
      'id = "ollama"',
      'kind = "openai"',
      'base_url = "http://127.0.0.1:11434/v1"',
      'api_key_env = "OLLAMA_KEY"',
      'models = ["llama3"]',
      '[models]',
      'default = "ollama/llama3"',
    ].join('\n');
    const config = parseConfigText(text, join(dir, 'a.toml'));
    expect(config.providers.map((p) => p.id)).toEqual(['local', 'ollama']);
    expect(config.runtime.bus).toBe('nats');
  });

  it('accepts a registry with a trusted key as GET /signing-key shows it', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64url');
    const text = `[catalog]\nregistry_url = "http://10.0.0.5:4210"\nregistry_key_env = "AP_REGISTRY_KEY"\ntrusted_keys = ["ed25519:${raw}"]`;
    const config = parseConfigText(text, join(dir, 'a.toml'));
    expect(config.catalog).toMatchObject({ registry_url: 'http://10.0.0.5:4210', trusted_keys: [`ed25519:${raw}`], request_timeout_ms: 10000 });
  });

  it('never echoes a rejected value that may be a secret', () => {
    const problems = problemsOf('[[providers]]\nid = "oa"\nkind = "openai"\nbase_url = "http://h"\napi_key_env = "sk-live-0123456789"');
    expect(problems.join('\n')).not.toContain('sk-live');
  });
});
