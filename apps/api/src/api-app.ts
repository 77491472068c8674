import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiDeps } from './deps.ts';

/** The Fastify instance every route plugin receives: TypeBox types flow from schemas to handlers. */
export type ApiApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A group of routes. Each lives in `routes/<area>-routes.ts` and is listed in `routes/index.ts`. */
export type RoutePlugin = (app: ApiApp, deps: ApiDeps) => void | Promise<void>;
