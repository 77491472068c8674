export { createGatewayTraffic, type GatewayTraffic } from './gateway-traffic.ts';
export { createGatewayViews, type GatewayViews } from './gateway-views.ts';
export {
  createModelGateway,
  type GatewayRequest,
  type GatewaySession,
  type ModelGateway,
  type ModelGatewayDeps,
} from './model-gateway.ts';
export {
  createPrivacyAudit,
  PRIVACY_COUNTERS,
  type PiiMetadata,
  type PrivacyActor,
  type PrivacyAudit,
  type RoutingMetadata,
} from './privacy-audit.ts';
export {
  decideRoute,
  forcedLocalTarget,
  isLocalEligible,
  type GatewaySettings,
  type RouteDecision,
} from './routing-policy.ts';
export { tokeniseRequest, tokenisingProvider } from './tokenising-provider.ts';
