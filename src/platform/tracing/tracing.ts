import type { Config } from '../../config.js'
import { endedAfter, noSpan, type Span, type SpanOptions, type TraceIds, type Tracer } from './span.js'

/**
 * OpenTelemetry tracing behind a small facade of our own: when it is off (no OTLP endpoint set), no
 * @opentelemetry package is ever imported, and these calls cost a comparison.
 */
const noTracer: Tracer = {
  startSpan: () => noSpan,
  currentHeaders: () => ({}),
  currentIds: () => undefined,
  shutdown: async () => undefined,
}

let tracer: Tracer = noTracer
let stopDatabaseSpans: () => void = () => undefined
/** Apps built in this process that use tracing: it stops with the last one closed (tests build several). */
let users = 0

export const tracingEnabled = (): boolean => tracer !== noTracer

export const startSpan = (name: string, options: SpanOptions): Span => tracer.startSpan(name, options)

/** The current trace context as W3C headers (`traceparent`, `tracestate`); empty when tracing is off. */
export const currentTraceHeaders = (): Record<string, string> => tracer.currentHeaders()

/**
 * The fields a log line gets while tracing is on (pino's `mixin`): the ids of the span it is written in, so
 * that the line and its trace are found from each other; none outside a span.
 */
export const traceLogFields = (): TraceIds | Record<string, never> => tracer.currentIds() ?? {}

/** Runs `work` in a span child of the current one (or of `options.parent`); a throw marks it failed. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (tracer === noTracer) return work(noSpan)
  const span = tracer.startSpan(name, options)
  return endedAfter(span, () => work(span))
}

/**
 * Starts OpenTelemetry when the configuration says so. The SDK reads the standard OTEL_* variables itself
 * (endpoint, headers, timeout, compression, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
 * OTEL_BSP_*). Nothing here patches module loading: spans come from the platform's own seams.
 */
export async function startTracing(settings: Config['tracing']): Promise<void> {
  if (!settings.enabled) return
  users++
  if (users > 1) return
  const [{ createOtelTracer }, { traceDatabaseQueries }] = await Promise.all([
    import('./otel.js'),
    import('./database-spans.js'),
  ])
  tracer = await createOtelTracer(settings.protocol)
  stopDatabaseSpans = traceDatabaseQueries(tracer)
}

/** Exports what is buffered and stops, once the last app that started tracing closes. */
export async function stopTracing(settings: Config['tracing']): Promise<void> {
  if (!settings.enabled) return
  users--
  if (users > 0) return
  const stopping = tracer
  tracer = noTracer
  stopDatabaseSpans()
  await stopping.shutdown()
}
