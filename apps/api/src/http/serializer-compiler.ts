import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

const eager = SerializerSelector();

/**
 * Fastify's response serializers (fast-json-stringify), compiled by the first response of each
 * route and status instead of all at boot: the api declares a response schema for every status of
 * several hundred routes, and their generated code (about 2.3 MB of source strings and its
 * compiled functions) stayed in the heap of every process although most routes are never called
 * there (docs/performance.md "Memory"). The output is the same serializer, built later.
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, serializerOpts) => {
  const build = eager(externalSchemas, serializerOpts);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= build(route))(data);
  };
};
