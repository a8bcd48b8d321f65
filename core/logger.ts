import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

/** Paths that may carry secrets; pino replaces them before anything is written. */
const REDACTED = [
  'req.headers.authorization',
  'req.headers["x-private-key"]',
  'req.headers["x-public-key"]',
  'headers.authorization',
  '*.api_key',
  '*.apiKey',
  '*.private_key',
  '*.privateKey',
  '*.webhook_secret',
  '*.secret',
  '*.token',
  'api_key',
  'token',
  'secret',
];

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACTED, censor: '[redacted]' } }, destination);
}
