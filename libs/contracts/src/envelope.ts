import { Type, type Static, type TSchema } from 'typebox';

/**
 * Envelope carried by every bus message and queue job (STYLE §2). Consumers treat `id` as the
 * idempotency key: at-least-once delivery means the same `id` can arrive more than once.
 */
export const MessageEnvelope = <T extends TSchema>(data: T) =>
  Type.Object({
    id: Type.String({ minLength: 1 }),
    correlation_id: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    occurred_at: Type.String(),
    data,
  });

export interface Envelope<T> {
  id: string;
  correlation_id: string;
  attempt: number;
  occurred_at: string;
  data: T;
}

export type EnvelopeOf<T extends TSchema> = Static<ReturnType<typeof MessageEnvelope<T>>>;
