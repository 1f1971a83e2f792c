import pino from 'pino';

export type Logger = pino.Logger;

// Never let a credential reach a log line, whatever shape the object has.
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.new_password',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  'password',
  'token',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    destination,
  );
}

/** Query-string values that are secrets (tokens) are masked before a URL is logged. */
export function safeUrl(url: string): string {
  return url.replace(/([?&](?:token|access_token|refresh_token|key|api_key)=)[^&]*/gi, '$1[redacted]');
}
