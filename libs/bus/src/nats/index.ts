export { NatsBus, connectNatsBus, type NatsBusOptions } from './nats-bus.ts';
export type { ErrorSink } from './nats-codec.ts';
