// Structured logs (pino, JSON lines on stdout). Secrets are redacted by path wherever they could
// appear; code never logs request bodies or tokens in the first place, this is the safety net.
import { pino, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  '*.authorization',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'adminToken',
  '*.adminToken',
  'password',
  '*.password',
  'bearerToken',
  '*.bearerToken',
  'connectionString',
  '*.connectionString',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'flex' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ sync: false }),
  );
}
