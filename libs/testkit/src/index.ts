export { storeConformance } from './store-conformance.ts';
export type { StoreConformanceContext, StoreFactory, StoreUnderTest } from './store-conformance.ts';
export { chainLink, expectGaplessChain } from './store-log-cases.ts';
export type { ChainEntry } from './store-log-cases.ts';
export { busConformance } from './bus-conformance.ts';
export { expectBusError } from './bus-harness.ts';
export type { BusFactory, BusHarness, BusUnderTest } from './bus-harness.ts';
export { gate, waitUntil } from './wait-until.ts';
export { queueConformance } from './queue-conformance.ts';
export { recorder, useQueueHarness } from './queue-harness.ts';
export type { ChildQueueSpec, QueueFactory, QueueHarness, QueueUnderTest } from './queue-harness.ts';
export { startFakeOpenAiServer } from './fake-openai-server.ts';
export type {
  FakeDropReply,
  FakeErrorReply,
  FakeOpenAiServer,
  FakeOpenAiServerOptions,
  FakeReply,
  FakeTextReply,
  FakeToolCallReply,
  FakeUsage,
  RecordedRequest,
} from './fake-openai-server.ts';
export { findBinary, requireBinary } from './require-binary.ts';
export { startNatsServer } from './nats-server.ts';
export type { NatsServerHandle, NatsServerOptions } from './nats-server.ts';
export { startRedisServer } from './redis-server.ts';
export type { RedisServerHandle, RedisServerOptions } from './redis-server.ts';
export { freePort } from './free-port.ts';
export * from './package-shelf.ts';
export { descendantsOf, processAlive, processRunning } from './process-alive.ts';
export { startWebhookReceiver } from './webhook-receiver.ts';
export type { ReceivedRequest, ReceiverScript, WebhookReceiver } from './webhook-receiver.ts';
export { startOtlpCollector, traceTree } from './otlp-collector.ts';
export type { CollectedSpan, OtlpCollector } from './otlp-collector.ts';
export * from './self-signed-cert.ts';
export { startPostgresServer } from './postgres-server.ts';
export { suitePostgres } from './suite-postgres.ts';
export type { PostgresServerHandle, PostgresServerOptions } from './postgres-server.ts';
export { PLATFORM_LOADER } from './platform-loader.ts';
