export { EmbeddedBus, createEmbeddedBus, type EmbeddedBusOptions } from './embedded-bus.ts';
