// Structured logs: one JSON object per line on stdout (pino), with the worker's identity on every
// line and secrets redacted wherever they appear in logged objects.
import { type Logger, pino } from 'pino'

export type { Logger }

export interface LoggerOptions {
  level?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** Fields on every line, e.g. { worker: 'w-1' }. */
  base?: Record<string, unknown>
  /** Where lines go; stdout by default. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream
}

const secretPaths = [
  'password',
  '*.password',
  '*.*.password',
  'connectionString',
  '*.connectionString',
  '*.*.connectionString',
  'token',
  '*.token',
  'accountKey',
  '*.accountKey',
]

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: secretPaths, censor: '***' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ sync: false }),
  )
}

/** A logger that drops everything, for tests and library defaults. */
export const silentLogger: Logger = pino({ level: 'silent' })
