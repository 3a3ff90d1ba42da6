// Observability: structured logs, Prometheus metrics, the perf line's phase clock and the HTTP
// endpoints. Files not re-exported here are internal to shared/telemetry.
export { type Endpoints, serveEndpoints } from './http.ts'
export { createLogger, type Logger, type LoggerOptions, silentLogger } from './logger.ts'
export { createMetrics, type FloeMetrics } from './metrics.ts'
export { type Phase, PhaseClock, phases } from './phases.ts'
