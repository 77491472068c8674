/** Display helpers: dates in the reader's locale with the UTC instant in a tooltip. */
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const number = new Intl.NumberFormat();
const usd = new Intl.NumberFormat(undefined, {
  style: 'currency',
  currency: 'USD',
  maximumFractionDigits: 4,
});

export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function formatDay(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
}

export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : number.format(value);
}

export function formatUsd(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : usd.format(value);
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const secs = ms / 1000;
  if (secs < 120) return `${secs.toFixed(secs < 10 ? 1 : 0)} s`;
  const mins = Math.floor(secs / 60);
  if (mins < 120) return `${mins} min`;
  const hours = Math.floor(mins / 60);
  return hours < 48 ? `${hours} h ${mins % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A status word (Running, {Error: "..."}, ...) as text. */
export function statusText(status: unknown): string {
  if (typeof status === 'string') return status;
  if (status !== null && typeof status === 'object') {
    const [key, value] = Object.entries(status)[0] ?? ['Unknown', ''];
    return `${key}: ${String(value)}`;
  }
  return String(status);
}

/**
 * An enum value in words, as a person reads it: `NotConfigured` -> `Not configured`, `not_sent` ->
 * `not sent`, `skipped_overlap` -> `skipped overlap`, `expiring_soon` -> `expiring soon`. The raw
 * value still decides the badge's tone (table.ts `toneOf`).
 */
export function words(value: string): string {
  return value
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, (_m, a: string, b: string) => `${a} ${b.toLowerCase()}`);
}

/** `statusText` with its enum part in words (`{Error: "..."}` -> `Error: ...`). */
export function statusWords(status: unknown): string {
  const text = statusText(status);
  const colon = text.indexOf(': ');
  return colon < 0 ? words(text) : `${words(text.slice(0, colon))}${text.slice(colon)}`;
}

/** The first `max` characters of a long text, with an ellipsis. */
export function clip(text: string | null | undefined, max = 160): string {
  if (text === null || text === undefined) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
