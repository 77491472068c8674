import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { simpleParser } from 'mailparser';
import { createTransport } from 'nodemailer';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients. */
  to: string[];
  from: string;
  subject: string;
  text: string;
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  headers: Record<string, string>;
}

export interface SmtpPeer {
  host: string;
  port: number;
  /** The credentials the server accepts (AUTH PLAIN/LOGIN, no TLS). */
  username: string;
  password: string;
  /** Every accepted message, parsed, in order. */
  messages: ReceivedMail[];
  close(): Promise<void>;
}

/** An SMTP server on a free loopback port that requires AUTH and records what it accepts. */
export async function startSmtpPeer(
  options: { username?: string; password?: string } = {},
): Promise<SmtpPeer> {
  const username = options.username ?? 'agent@example.test';
  const password = options.password ?? randomUUID();
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      if (auth.username === username && auth.password === password) return callback(null, { user: username });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      readAll(stream)
        .then(async (raw) => {
          const mail = await simpleParser(raw);
          const headers: Record<string, string> = {};
          for (const line of mail.headerLines)
            headers[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
          messages.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            subject: mail.subject ?? '',
            text: (mail.text ?? '').trim(),
            message_id: mail.messageId ?? '',
            in_reply_to: mail.inReplyTo ?? null,
            references:
              mail.references === undefined
                ? []
                : Array.isArray(mail.references)
                  ? mail.references
                  : [mail.references],
            headers,
          });
          callback();
        })
        .catch((error: unknown) => callback(error as Error));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('could not read the SMTP peer port');
  return {
    host: '127.0.0.1',
    port: address.port,
    username,
    password,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface MailInput {
  /** Where the listener is: a channel's listen_host/listen_port. */
  host?: string;
  port: number;
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Default a fresh one; pass the same one to model a sending server's retry. */
  message_id?: string;
  headers?: Record<string, string>;
}

/** Sends one mail to an SMTP listener (plain SMTP, no AUTH), as another mail server would; returns its Message-ID. */
export async function sendMail(input: MailInput): Promise<string> {
  const messageId = input.message_id ?? `<${randomUUID()}@sender.example.test>`;
  const transport = createTransport({
    host: input.host ?? '127.0.0.1',
    port: input.port,
    secure: false,
    ignoreTLS: true,
  });
  try {
    await transport.sendMail({
      from: input.from,
      to: input.to,
      subject: input.subject,
      text: input.text,
      messageId,
      ...(input.headers === undefined ? {} : { headers: input.headers }),
    });
  } finally {
    transport.close();
  }
  return messageId;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
