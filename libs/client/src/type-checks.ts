// Compile-time checks of the generated client, run by `npm run typecheck` (never executed): each
// `@ts-expect-error` line is a mistake an integrator could make that must not compile. If the
// types ever lose their grip (a path typed `any`, a body that accepts anything), the directive
// itself becomes the error, so these checks cannot pass vacuously.
import { createPlatformClient, unwrap, type PlatformClient } from './client.ts';
import type { ErrorEnvelope, FlatError, PlatformApiError } from './errors.ts';
import type { paths } from './generated/api.ts';

/** Fails to compile unless A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** True when each type is assignable to the other (openapi-fetch wraps bodies in `Readable<>`). */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function assertType<T extends true>(_proof: T): void {}

export async function typeChecks(client: PlatformClient, id: string): Promise<void> {
  // Right: path, path parameter and body as the document declares them.
  const _reply = await unwrap(
    client.POST('/agents/{id}/send', { params: { path: { id } }, body: { message: 'hello' } }),
  );
  assertType<Equal<typeof _reply.content, string>>(true);
  assertType<Equal<typeof _reply.tokens_used, number>>(true);

  // @ts-expect-error -- a misspelled body field: bodies refuse unknown fields, as the api does
  await client.POST('/agents/{id}/send', { params: { path: { id } }, body: { mesage: 'hello' } });
  // @ts-expect-error -- a body field of the wrong type
  await client.POST('/agents/{id}/send', { params: { path: { id } }, body: { message: 42 } });
  // @ts-expect-error -- a required body field missing
  await client.POST('/agents/{id}/send', { params: { path: { id } }, body: {} });
  // @ts-expect-error -- a path parameter of the wrong type (agent ids are strings)
  await client.POST('/agents/{id}/send', { params: { path: { id: 42 } }, body: { message: 'hello' } });
  // @ts-expect-error -- the path parameter missing
  await client.POST('/agents/{id}/send', { body: { message: 'hello' } });
  // @ts-expect-error -- a path the api does not have
  await client.GET('/agent');
  // @ts-expect-error -- a method the path does not have (messages are POSTed)
  await client.GET('/agents/{id}/send', { params: { path: { id } } });
  // @ts-expect-error -- a query parameter of the wrong type
  await client.GET('/security/audit', { params: { query: { limit: 'five' } } });
  // @ts-expect-error -- an enum the document closes: a role that does not exist
  await client.POST('/auth/keys', { body: { name: 'ci', role: 'superuser' } });

  // Query parameters with a default may be left out (the api fills them in).
  const { entries: _entries } = await unwrap(client.GET('/security/audit'));
  assertType<Equal<(typeof _entries)[number]['seq'], number>>(true);

  // Response fields are typed: a misspelled one does not compile.
  const { agents } = await unwrap(client.GET('/agents'));
  assertType<Equal<(typeof agents)[number]['state'], 'Running' | 'Suspended'>>(true);
  // @ts-expect-error -- agents have a `state`, not a `status`
  void agents[0]?.status;

  // A declared error body is the spec's envelope; a 204 resolves to undefined.
  const missing = await client.GET('/agents/{id}', { params: { path: { id } } });
  if (missing.error !== undefined) assertType<Mutual<typeof missing.error, ErrorEnvelope>>(true);
  // Text routes: asked for as text or a stream, not JSON.
  const { data: _metrics } = await client.GET('/metrics', { parseAs: 'text' });
  assertType<Equal<typeof _metrics, string | undefined>>(true);

  const _deleted = await unwrap(client.DELETE('/schedules/{id}', { params: { path: { id } } }));
  assertType<Equal<typeof _deleted, undefined>>(true);
}

/** The hand-written error types are the document's: the 404 of GET /agents/{id} and the 403 union of send. */
type NotFoundBody = paths['/agents/{id}']['get']['responses'][404]['content']['application/json'];
type SendForbiddenBody = paths['/agents/{id}/send']['post']['responses'][403]['content']['application/json'];
assertType<Equal<NotFoundBody, ErrorEnvelope>>(true);
assertType<Equal<SendForbiddenBody, ErrorEnvelope | FlatError>>(true);

// The options are checked too.
// @ts-expect-error -- baseUrl is required
createPlatformClient({ token: 'svc_sk_...' });
export const errorFields: (keyof PlatformApiError)[] = [
  'status',
  'category',
  'details',
  'body',
  'flat',
  'requestId',
  'isRoleRefusal',
];
