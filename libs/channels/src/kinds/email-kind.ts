import { isIP } from 'node:net';
import type { ChannelOutbound } from '@agent-platform/contracts';
import type { createTransport as CreateTransport, Transporter } from 'nodemailer';
import type { ChannelConfig, ChannelConnection, ChannelKind } from '../channel-kind.ts';
import { ChannelConfigError } from '../channel-kind.ts';
import {
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalStringList,
  requiredPort,
  requiredString,
} from './config-fields.ts';
import type { SmtpListener } from './email-listener.ts';
import { resolveGuardedHost } from './guarded-host.ts';

interface EmailConfig {
  smtpHost: string;
  smtpPort: number;
  smtpSecure: boolean;
  username: string | undefined;
  password: string | undefined;
  from: string;
  listenHost: string;
  /** Absent: the channel only sends. */
  listenPort: number | undefined;
  allowedRecipients: string[] | undefined;
}

function readConfig(config: ChannelConfig): EmailConfig {
  const from = requiredString(config, 'from');
  if (!from.includes('@')) throw new ChannelConfigError('from', 'from must be an email address');
  const username = optionalString(config, 'username');
  const password = optionalString(config, 'password');
  if (password !== undefined && username === undefined)
    throw new ChannelConfigError('username', 'username is required when password is set');
  return {
    smtpHost: requiredString(config, 'smtp_host'),
    smtpPort: requiredPort(config, 'smtp_port'),
    smtpSecure: optionalBoolean(config, 'smtp_secure') ?? false,
    username,
    password,
    from,
    listenHost: optionalString(config, 'listen_host') ?? '127.0.0.1',
    listenPort: optionalInteger(config, 'listen_port', 1, 65_535),
    allowedRecipients: optionalStringList(config, 'allowed_recipients')?.map((a) => a.toLowerCase()),
  };
}

/**
 * Email: SMTP out through the configured server (nodemailer), SMTP in through a listener the
 * channel runs itself (smtp-server on `listen_host:listen_port`; point an MX or a relay at it).
 * See docs/channel-kinds.md#email.
 */
export const emailKind: ChannelKind = {
  kind: 'email',
  fields: ['smtp_host', 'smtp_port', 'smtp_secure', 'username', 'password', 'from', 'listen_host', 'listen_port', 'allowed_recipients'],
  secretFields: ['password'],
  // smtp_secure is not one: it changes how the password travels to the same server, not where.
  destinationFields: ['smtp_host', 'smtp_port'],
  check(config) {
    readConfig(config);
  },
  async open(context) {
    const config = readConfig(context.config);
    let transporter: Transporter | undefined;
    let listener: SmtpListener | undefined;
    try {
      // D9: the SMTP host comes from a channel config; connect to the address that was checked.
      const address = await resolveGuardedHost(config.smtpHost, context.allowPrivateTargets);
      // Loaded by the first email channel, not at boot (docs/performance.md "Memory").
      const { createTransport } = await import('nodemailer');
      transporter = smtpTransport(createTransport, config, address);
      await transporter.verify();
      if (config.listenPort !== undefined) {
        const { openSmtpListener } = await import('./email-listener.ts');
        listener = await openSmtpListener(context, { ...config, listenPort: config.listenPort });
      }
      context.setStatus('Connected');
    } catch (error) {
      context.setStatus({ Error: smtpProblem(error) });
    }
    return emailConnection(config, transporter, listener);
  },
};

function smtpTransport(createTransport: typeof CreateTransport, config: EmailConfig, address: string): Transporter {
  return createTransport({
    host: address,
    port: config.smtpPort,
    secure: config.smtpSecure,
    ...(config.username === undefined
      ? {}
      : { auth: { user: config.username, pass: config.password ?? '' } }),
    // The certificate is checked against the configured name, not the address connected to.
    ...(isIP(config.smtpHost) === 0 ? { tls: { servername: config.smtpHost } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
}

function smtpProblem(error: unknown): string {
  const e = error as { code?: string; responseCode?: number; message?: string };
  if (e.code === 'EAUTH' || e.responseCode === 535)
    return `the SMTP server refused the credentials (${e.responseCode ?? e.code})`;
  return `SMTP: ${e.message ?? String(error)}`;
}

function emailConnection(
  config: EmailConfig,
  transporter: Transporter | undefined,
  listener: SmtpListener | undefined,
): ChannelConnection {
  let closed = false;
  return {
    async send(message: ChannelOutbound) {
      if (closed) throw new Error('the email channel is closed');
      if (transporter === undefined) throw new Error('the email channel has no working SMTP connection');
      const thread = message.thread ?? undefined;
      const references = [
        ...(message.meta.references ?? '').split(/\s+/).filter(Boolean),
        ...(thread ? [thread] : []),
      ];
      await transporter.sendMail({
        from: config.from,
        to: message.conversation,
        subject: replySubject(message.meta.subject),
        text: message.text,
        ...(thread === undefined ? {} : { inReplyTo: thread }),
        ...(references.length === 0 ? {} : { references }),
        // RFC 3834: marks the reply as automatic, so other responders do not answer it back.
        headers: { 'Auto-Submitted': 'auto-replied' },
      });
    },
    async close() {
      closed = true;
      transporter?.close();
      await listener?.close();
    },
  };
}

function replySubject(subject: string | undefined): string {
  if (subject === undefined || subject.trim() === '') return 'Re: your message';
  return /^re:/i.test(subject.trim()) ? subject : `Re: ${subject}`;
}
