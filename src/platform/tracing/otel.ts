import {
  context,
  type Span as OtelSpan,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import type { TracingProtocol } from '../../config.js'
import { noSpan, type Span, type SpanAttributes, type SpanOptions, type Tracer } from './span.js'

const KINDS = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
} as const

const defined = (attributes: SpanAttributes = {}) =>
  Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined)) as Record<
    string,
    string | number | boolean
  >

/** What `error.type` says of a failure: a status code, an error's code (SQLSTATE, errno) or its class. */
function errorType(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error)
  // Drizzle wraps the driver's error (whose code is the SQLSTATE) in one quoting the query's parameters.
  const cause = (error as { cause?: unknown }).cause ?? error
  const code = (cause as { code?: unknown }).code
  return typeof code === 'string' ? code : ((cause as object).constructor?.name ?? 'Error')
}

/** The exporter OTEL_EXPORTER_OTLP_PROTOCOL names; each reads its endpoint and settings from OTEL_*. */
async function otlpExporter(protocol: TracingProtocol): Promise<SpanExporter> {
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    return new OTLPTraceExporter()
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter()
}

function wrap(span: OtelSpan, parentContext: typeof ROOT_CONTEXT): Span {
  const spanContext = trace.setSpan(parentContext, span)
  const recording = span.isRecording()
  return {
    recording,
    setAttributes: (attributes) => {
      if (recording) span.setAttributes(defined(attributes))
    },
    fail(error) {
      span.setAttribute('error.type', errorType(error))
      span.setStatus({ code: SpanStatusCode.ERROR })
    },
    end: () => span.end(),
    run: (work) => context.with(spanContext, work),
  }
}

/** OpenTelemetry's Node SDK: spans batched to an OTLP/HTTP endpoint, W3C trace context, async context. */
export async function createOtelTracer(protocol: TracingProtocol): Promise<Tracer> {
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over our default name.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': 'platform-backend' }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(await otlpExporter(protocol))],
  })
  provider.register()
  const tracer = provider.getTracer('platform-backend')
  return {
    startSpan(name, options: SpanOptions) {
      const parentContext = options.parent
        ? propagation.extract(ROOT_CONTEXT, options.parent)
        : context.active()
      // Under an unsampled request or job, a query or command makes no span at all.
      if (options.requireParent && !trace.getSpan(parentContext)?.isRecording()) return noSpan
      // Attributes once sampled: the sampler (OTEL_TRACES_SAMPLER's, by trace id and parent) does not read them.
      const span = tracer.startSpan(name, { kind: KINDS[options.kind] }, parentContext)
      if (span.isRecording() && options.attributes) span.setAttributes(defined(options.attributes))
      // Unsampled, it stays current all the same: what it queues or calls carries its decision on.
      return wrap(span, parentContext)
    },
    currentIds() {
      const spanContext = trace.getSpan(context.active())?.spanContext()
      return spanContext && { trace_id: spanContext.traceId, span_id: spanContext.spanId }
    },
    currentHeaders() {
      const headers: Record<string, string> = {}
      propagation.inject(context.active(), headers)
      return headers
    },
    async shutdown() {
      await provider.shutdown()
      trace.disable()
      context.disable()
      propagation.disable()
    },
  }
}
