import { ChannelConfigError, type ChannelConfig } from '../channel-kind.ts';

/**
 * Readers for a channel's config used by every kind's `check` (the spec's dry-run construction):
 * shape and values only, never the network. Each throws ChannelConfigError naming the field.
 */
export function requiredString(config: ChannelConfig, field: string): string {
  const value = config[field];
  if (typeof value !== 'string' || value.trim() === '')
    throw new ChannelConfigError(field, `${field} is required and must be a non-empty string`);
  return value;
}

export function optionalString(config: ChannelConfig, field: string): string | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ChannelConfigError(field, `${field} must be a string`);
  return value === '' ? undefined : value;
}

export function optionalBoolean(config: ChannelConfig, field: string): boolean | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ChannelConfigError(field, `${field} must be true or false`);
  return value;
}

export function optionalInteger(
  config: ChannelConfig,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ChannelConfigError(field, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

export function requiredPort(config: ChannelConfig, field: string): number {
  if (config[field] === undefined || config[field] === null)
    throw new ChannelConfigError(field, `${field} is required (a port from 1 to 65535)`);
  return optionalInteger(config, field, 1, 65_535) as number;
}

export function optionalStringList(config: ChannelConfig, field: string): string[] | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === ''))
    throw new ChannelConfigError(field, `${field} must be a list of non-empty strings`);
  return value as string[];
}

/** A URL whose scheme is one of `protocols` (e.g. `['http:', 'https:']`); undefined when absent. */
export function optionalUrl(
  config: ChannelConfig,
  field: string,
  protocols: readonly string[],
): URL | undefined {
  const value = optionalString(config, field);
  if (value === undefined) return undefined;
  return parseUrl(value, field, protocols);
}

export function requiredUrl(config: ChannelConfig, field: string, protocols: readonly string[]): URL {
  return parseUrl(requiredString(config, field), field, protocols);
}

function parseUrl(value: string, field: string, protocols: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ChannelConfigError(field, `${field} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol))
    throw new ChannelConfigError(
      field,
      `${field} must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`,
    );
  if (url.hostname === '') throw new ChannelConfigError(field, `${field} has no host`);
  return url;
}

/** A base URL without its trailing slash, so `${base}/method` is well formed. */
export function trimBase(url: URL): string {
  return url.href.replace(/\/+$/, '');
}
