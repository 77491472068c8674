import { pino, type Logger as PinoLogger, type StreamEntry } from 'pino';
import { createLogBuffer, type LogBuffer } from './log-buffer.ts';

/** The platform's structured logger (pino). Child loggers keep the same redaction and buffer. */
export type Logger = PinoLogger;

export interface LoggerOptions {
  /** pino level name: fatal, error, warn, info, debug, trace or silent. */
  level: string;
  /** How many recent lines GET /logs can return. */
  bufferLines: number;
  /** Where lines go besides the buffer; default stdout. `silent` keeps them in the buffer only. */
  destination?: NodeJS.WritableStream | 'stdout' | 'silent';
}

/**
 * Credentials must never reach a log line, whatever a caller passes as bindings: these paths are
 * censored by pino before formatting, so the buffer (GET /logs) is clean too. Request bodies are
 * never logged at all (the api logs method, route, status and duration only); `body` is listed
 * here as a second line of defence.
 */
export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.cookie',
  'secret',
  '*.secret',
  'value',
  '*.value',
  'password',
  '*.password',
  'api_key',
  '*.api_key',
  'token',
  '*.token',
  'body',
  '*.body',
];

export function createLogger(options: LoggerOptions): { logger: Logger; buffer: LogBuffer } {
  const buffer = createLogBuffer(options.bufferLines);
  // Per-stream level 'trace': the logger's own level does the filtering, once.
  const streams: StreamEntry[] = [{ level: 'trace', stream: buffer }];
  const destination = options.destination ?? 'stdout';
  if (destination === 'stdout') streams.push({ level: 'trace', stream: pino.destination({ dest: 1, sync: true }) });
  else if (destination !== 'silent') streams.push({ level: 'trace', stream: destination });

  const logger = pino(
    {
      level: options.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    pino.multistream(streams),
  );
  return { logger, buffer };
}
