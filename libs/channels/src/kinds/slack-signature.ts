import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack refuses requests older than five minutes; so do we (a replayed request is older). */
export const SLACK_MAX_AGE_SECONDS = 300;

/** `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the app's signing secret. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}

/** Why a request is refused, or null when its signature and timestamp hold. */
export function slackRequestProblem(
  signingSecret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  now: Date,
): string | null {
  const timestamp = header(headers, 'x-slack-request-timestamp');
  const signature = header(headers, 'x-slack-signature');
  if (timestamp === undefined || signature === undefined)
    return 'missing X-Slack-Signature or X-Slack-Request-Timestamp';
  if (!/^\d+$/.test(timestamp)) return 'X-Slack-Request-Timestamp is not a number of seconds';
  const age = Math.abs(now.getTime() / 1000 - Number(timestamp));
  if (age > SLACK_MAX_AGE_SECONDS)
    return 'X-Slack-Request-Timestamp is more than five minutes away (a replay?)';
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, rawBody));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return 'X-Slack-Signature does not match';
  return null;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
