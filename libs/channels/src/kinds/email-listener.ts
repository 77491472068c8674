import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { ChannelContext, InboundMessage } from '../channel-kind.ts';

/** Largest message accepted (advertised with SIZE, refused with 552 past it). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface SmtpListenerOptions {
  listenHost: string;
  listenPort: number;
  /** Lower-case addresses accepted as recipients; undefined: any. */
  allowedRecipients: string[] | undefined;
}

export interface SmtpListener {
  close(): Promise<void>;
}

/**
 * The inbound half of the email kind: an SMTP server that accepts mail for the channel, hands
 * each message to `deliver`, and answers 250 only once it is safe (451 otherwise, so the sending
 * server retries with the same Message-ID). No AUTH and no STARTTLS: it is meant to sit behind
 * the MX or a relay that terminates TLS (docs/channel-kinds.md#email).
 */
export async function openSmtpListener(
  context: ChannelContext,
  config: SmtpListenerOptions,
): Promise<SmtpListener> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    closeTimeout: 1_000,
    onRcptTo(address, _session, callback) {
      const allowed = config.allowedRecipients;
      if (allowed !== undefined && !allowed.includes(address.address.toLowerCase()))
        return callback(smtpError(550, `no mailbox here for ${address.address}`));
      callback();
    },
    onData(stream, session, callback) {
      readAll(stream)
        .then(async (raw) => {
          if ((stream as Readable & { sizeExceeded?: boolean }).sizeExceeded)
            return callback(smtpError(552, 'message too large'));
          const message = toInbound(await simpleParser(raw), raw, session.envelope.mailFrom);
          if (message !== null) await context.deliver(message);
          callback();
        })
        .catch((error: unknown) => {
          context.logger.warn(
            { channel_id: context.channelId, reason: (error as Error).message },
            'inbound email not delivered',
          );
          callback(smtpError(451, 'temporary failure, try again later'));
        });
    },
  });
  server.on('error', (error) =>
    context.logger.warn({ channel_id: context.channelId, reason: error.message }, 'smtp listener error'),
  );
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(config.listenPort, config.listenHost, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * One parsed mail as an inbound message; null for automatic mail (auto-replies, bounces, lists),
 * which an agent must not answer (RFC 3834), or mail with no sender.
 */
function toInbound(
  mail: ParsedMail,
  raw: Buffer,
  envelopeFrom: false | { address: string },
): InboundMessage | null {
  const autoSubmitted = headerText(mail, 'auto-submitted');
  const precedence = headerText(mail, 'precedence');
  if (
    (autoSubmitted !== undefined && autoSubmitted.toLowerCase() !== 'no') ||
    /^(bulk|junk|list|auto_reply)$/i.test(precedence ?? '')
  )
    return null;
  const sender = firstAddress(mail.from) ?? (envelopeFrom === false ? undefined : envelopeFrom.address);
  if (sender === undefined || sender === '') return null;
  const messageId =
    mail.messageId ?? `<sha256-${createHash('sha256').update(raw).digest('hex')}@agent-platform>`;
  const references = Array.isArray(mail.references) ? mail.references.join(' ') : (mail.references ?? '');
  return {
    peer_message_id: messageId,
    conversation: sender.toLowerCase(),
    thread: messageId,
    sender: sender.toLowerCase(),
    text: (mail.text ?? '').trim(),
    meta: { subject: mail.subject ?? '', message_id: messageId, references },
  };
}

function firstAddress(from: AddressObject | AddressObject[] | undefined): string | undefined {
  const list = Array.isArray(from) ? from : from === undefined ? [] : [from];
  for (const group of list) for (const entry of group.value) if (entry.address) return entry.address;
  return undefined;
}

function headerText(mail: ParsedMail, name: string): string | undefined {
  const value = mail.headers.get(name);
  return typeof value === 'string' ? value : undefined;
}

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
