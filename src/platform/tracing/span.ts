/** Attribute values as OpenTelemetry takes them; undefined ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>

/** W3C trace context headers (`traceparent`, `tracestate`): a request's, or those a queued job carries. */
export type TraceHeaders = Record<string, string | string[] | undefined>

export interface SpanOptions {
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer'
  attributes?: SpanAttributes
  /** Continues the trace these headers carry instead of the current one (none: a trace of its own). */
  parent?: TraceHeaders
  /** Makes no span unless one is current: a query or command outside any request or job is noise. */
  requireParent?: boolean
}

export interface Span {
  /**
   * Sampled: it records and is exported. An unsampled span records nothing; the work it covers starts no
   * span of its own (queries, commands), so a caller builds no attributes for it.
   */
  readonly recording: boolean
  setAttributes(attributes: SpanAttributes): void
  /**
   * Marks the span failed with `error.type`: a status code, an error's code (SQLSTATE, errno) or class,
   * never its message, which may quote a query's parameters.
   */
  fail(error: unknown): void
  end(): void
  /** Runs `work` with this span current, so that the spans it starts are its children. */
  run<T>(work: () => T): T
}

/** The one implementation beside the no-op: OpenTelemetry's SDK (otel.ts), loaded only when tracing is on. */
export interface Tracer {
  startSpan(name: string, options: SpanOptions): Span
  /** The current trace context as W3C headers, for a queued job or an outgoing call; empty without one. */
  currentHeaders(): Record<string, string>
  /** The current span's ids, as log lines carry them; undefined without one. */
  currentIds(): TraceIds | undefined
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>
}

/** A log line's fields naming the span it was written in (lowercase hex, as W3C trace context writes them). */
export interface TraceIds {
  trace_id: string
  span_id: string
}

export const noSpan: Span = {
  recording: false,
  setAttributes() {},
  fail() {},
  end() {},
  run: (work) => work(),
}

/**
 * Runs `work` with `span` current and ends it when the work settles; a throw marks it failed. Unsampled, the
 * work runs as it is: no promise is added.
 */
export function endedAfter<T>(span: Span, work: () => Promise<T>): Promise<T> {
  return span.recording ? recorded(span, work) : span.run(work)
}

async function recorded<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await span.run(work)
  } catch (error) {
    span.fail(error)
    throw error
  } finally {
    span.end()
  }
}
