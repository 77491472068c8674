/** The variable a stdio server finds the integration's `key` in (docs/integrations.md "Credentials"). */
export const INTEGRATION_KEY_ENV = 'INTEGRATION_KEY';

/** Variable names that hold secrets by their name (the rule GET /config redacts by, plus `_KEY`). */
const SECRET_NAME = /secret|password|passwd|token|api_?key|private_?key|credential|_key$/i;

export interface ServerEnvOptions {
  /** The platform process's environment. */
  platformEnv: Record<string, string | undefined>;
  /** Variables that hold the platform's own secrets by configuration: `[vault] key_env`, each provider's `api_key_env`. */
  secretNames: readonly string[];
  /** mcp.json `env`. */
  packageEnv: Record<string, string>;
  key: string | null;
}

/**
 * The environment a stdio server is spawned with: the platform's own, minus its secrets (the
 * variables the config names as secret holders, `AP_*` platform variables, and any name that
 * looks like a secret), plus the package's `env`, plus `INTEGRATION_KEY` when the integration has
 * a key. The package cannot override the key: it is set last.
 */
export function serverEnv(options: ServerEnvOptions): Record<string, string> {
  const dropped = new Set(options.secretNames);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.platformEnv)) {
    if (value === undefined || dropped.has(name) || name.startsWith('AP_') || SECRET_NAME.test(name))
      continue;
    env[name] = value;
  }
  Object.assign(env, options.packageEnv);
  if (options.key !== null) env[INTEGRATION_KEY_ENV] = options.key;
  else delete env[INTEGRATION_KEY_ENV];
  return env;
}
