import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { assertHeaders, BusError, DEFAULT_MAX_PAYLOAD_BYTES, headerBytes, payloadTooLarge, toRemoteErrorBody, type MessageHeaders, type RemoteErrorBody } from '../bus.ts';

/** Receives errors nobody else can: a listener that threw, an `onDeadLetter` that threw, a failed pull. */
export type ErrorSink = (error: unknown, context: { subject: string }) => void;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON on the wire; `undefined` (which JSON cannot encode) travels as an empty body. */
export function encode(value: unknown): Uint8Array {
  if (value === undefined) return new Uint8Array(0);
  return encoder.encode(JSON.stringify(value));
}

/** The connected server's `max_payload` (it may differ after a reconnect to another server). */
export function maxPayloadOf(nc: NatsConnection): number {
  return nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD_BYTES;
}

/** Encodes `value`, refusing it before anything is sent when the server would (bus.ts "Size"). */
export function encodeWithin(nc: NatsConnection, value: unknown, what: string, headers?: MessageHeaders): Uint8Array {
  const data = encode(value);
  const max = maxPayloadOf(nc);
  const bytes = data.length + headerBytes(headers);
  if (bytes > max) throw payloadTooLarge(what, bytes, max);
  return data;
}

/** The port's headers as NATS headers; undefined when there are none (no header block sent). */
export function toNatsHeaders(headers: MessageHeaders | undefined): MsgHdrs | undefined {
  assertHeaders(headers);
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return h;
}

/** A message's headers as the port gives them to handlers: NATS's own (`Nats-*`) left out. */
export function fromNatsHeaders(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h === undefined) return out;
  for (const name of h.keys()) if (!/^nats-/i.test(name)) out[name] = h.get(name);
  return out;
}

export function decode<T>(data: Uint8Array): T {
  if (data.length === 0) return undefined as T;
  return JSON.parse(decoder.decode(data)) as T;
}

/**
 * Handler errors travel as `{"error": RemoteErrorBody}` with the NATS services convention's
 * headers, so the requester tells an error apart from a reply that happens to have an `error`
 * field, and `nats req` shows the failure too.
 */
const ERROR_HEADER = 'Nats-Service-Error';
const ERROR_CODE_HEADER = 'Nats-Service-Error-Code';

export function errorReply(error: unknown): { data: Uint8Array; headers: MsgHdrs } {
  return remoteErrorReply(toRemoteErrorBody(error));
}

export function remoteErrorReply(body: RemoteErrorBody): { data: Uint8Array; headers: MsgHdrs } {
  const h = natsHeaders();
  h.set(ERROR_HEADER, body.message.replace(/[\r\n]+/g, ' '));
  h.set(ERROR_CODE_HEADER, '500');
  return { data: encode({ error: body }), headers: h };
}

/** The decoded reply, or the handler's error as `BusError('remote')`. */
export function readReply<T>(msg: Msg): T {
  if (msg.headers?.has(ERROR_CODE_HEADER)) {
    const body = decode<{ error?: RemoteErrorBody } | undefined>(msg.data)?.error ?? {
      category: 'Internal',
      message: msg.headers.get(ERROR_HEADER),
    };
    throw new BusError('remote', body.message, body);
  }
  return decode<T>(msg.data);
}
