export * from './token-validator.ts';
export * from './token-rejected.ts';
export { ASYMMETRIC_ALGORITHMS, algorithmProblems, isAsymmetricAlgorithm, type AsymmetricAlgorithm } from './algorithms.ts';
export { endpointUrlProblem, isLoopbackUrlHost } from './endpoint-url.ts';
export { externalRoles, mapRole } from './role-claim.ts';
export { discoveryUrl } from './discovery.ts';
