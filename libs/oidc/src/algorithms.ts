/**
 * The JWS algorithms a token may be signed with: asymmetric only. `none` is never accepted, nor
 * any HMAC algorithm (HS256/384/512): with an HMAC algorithm the "key" would be a shared secret,
 * and a verifier that took the provider's public key as that secret would accept tokens anyone
 * can forge (the classic algorithm-confusion attack).
 */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

export function isAsymmetricAlgorithm(alg: string): alg is AsymmetricAlgorithm {
  return (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg);
}

/** The problems of an `allowed_algorithms` list (empty when it is fine), one sentence each. */
export function algorithmProblems(algorithms: readonly string[]): string[] {
  const problems: string[] = [];
  if (algorithms.length === 0) problems.push('allowed_algorithms must name at least one algorithm');
  for (const alg of algorithms) {
    if (alg.toLowerCase() === 'none') problems.push("algorithm 'none' is never allowed: unsigned tokens prove nothing");
    else if (/^HS/i.test(alg)) problems.push(`algorithm '${alg.slice(0, 20)}' is never allowed: HMAC needs a shared secret, issuers sign with a private key`);
    else if (!isAsymmetricAlgorithm(alg)) problems.push(`unknown algorithm '${alg.slice(0, 20)}': expected one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`);
  }
  if (new Set(algorithms).size !== algorithms.length) problems.push('allowed_algorithms lists an algorithm twice');
  return problems;
}
