export { RUN_CLAIMS, type TrustedGrant } from './trusted-grant.ts';
export { trustedPublisherRecords, type TrustedPublishersRecord } from './trusted-publishers.ts';
export { createTrustedPublisherService, type TrustedPublisherService } from './trusted-publisher-service.ts';
export {
  createTrustedPublishingExchange,
  TRUSTED_PUBLISHING_TOKEN_LIFETIME,
  type TrustedPublishingExchange,
  type TrustedPublishingExchangeResult,
} from './trusted-publishing-exchange.ts';
