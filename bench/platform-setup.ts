import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from '@agent-platform/config';

// What every platform target does before its run, all-in-one or fleet: a licence signed for the
// run, the first admin key through the bootstrap rule, the claims-intake agent installed.

const CLAIMS_INTAKE = fileURLToPath(new URL('../examples/claims-intake', import.meta.url));

/**
 * Far above any rate this machine can reach: `[agents] rate_limit_per_minute` (default 120)
 * would otherwise turn a send run into a stream of 429s after its first two seconds.
 */
export const BENCH_RATE_LIMIT_PER_MINUTE = 1_000_000_000;

/**
 * Writes `<dataDir>/licence.jwt` and `licence-public.pem`: a one-day development licence (the
 * `local` provider) signed by a key generated for the run, entitled to `providerIds` as well.
 * Returns the two paths for `[licence]`.
 */
export async function writeBenchLicence(
  dataDir: string,
  providerIds: string[] = [],
): Promise<{ file: string; public_key_file: string }> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { privateKeyPem, publicKeyPem } = await generateLicenceKeyPair();
  const claims = createDevLicenceClaims(new Date(), 1);
  claims.provider_entitlements = providerIds.map((provider_id) => ({ provider_id, budget_usd: null }));
  const file = join(dataDir, 'licence.jwt');
  const public_key_file = join(dataDir, 'licence-public.pem');
  await writeFile(public_key_file, publicKeyPem);
  await writeFile(file, await issueLicence(privateKeyPem, claims));
  return { file, public_key_file };
}

/** The first admin key, through the bootstrap rule (`POST /auth/keys` while no key exists). */
export async function bootstrapAdminKey(url: string): Promise<string> {
  return (await postJson<{ secret: string }>(url, '/auth/keys', { name: 'bench', role: 'admin' })).secret;
}

/** Installs examples/claims-intake, activated; returns the agent's id. */
export async function installClaimsIntake(url: string, token: string): Promise<string> {
  const reply = await postJson<{ installed: Array<{ name: string; id?: string }> }>(
    url,
    '/catalog/install',
    { path: CLAIMS_INTAKE, activate: true },
    token,
  );
  const agent = reply.installed.find((p) => p.name === 'claims-intake');
  if (agent?.id === undefined)
    throw new Error(`claims-intake was not installed as an agent: ${JSON.stringify(reply)}`);
  return agent.id;
}

/** The message every send target sends (and the direct NATS request carries). */
export const BENCH_MESSAGE = 'Water damage in the kitchen, policy HO-1234';

/** `POST /agents/{id}/send` as autocannon repeats it. */
export function sendRequest(agentId: string, token: string, message = BENCH_MESSAGE) {
  return {
    method: 'POST' as const,
    path: `/agents/${agentId}/send`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  };
}

async function postJson<T>(url: string, path: string, body: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
