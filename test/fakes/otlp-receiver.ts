import { type FakeServer, sendJson, startFakeServer } from './http-server.js'

/** A span as received, its attributes flattened to plain values; the resource's with it. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string | undefined
  name: string
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer'
  attributes: Record<string, string | number | boolean>
  resource: Record<string, string | number | boolean>
}

export interface OtlpReceiver extends FakeServer {
  /** Every span received so far, in the order they came, once each (an exporter retries a slow export). */
  spans(): ReceivedSpan[]
}

interface KeyValue {
  key: string
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number }
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: {
      spans?: {
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind: number
        attributes?: KeyValue[]
      }[]
    }[]
  }[]
}

const KINDS = ['internal', 'internal', 'server', 'client', 'producer', 'consumer'] as const

const flatten = (attributes: KeyValue[] = []) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue),
    ]),
  )

/**
 * A collector's OTLP/HTTP traces endpoint (`POST /v1/traces`), JSON encoding only: the exporter is run with
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json. Answers every export with success.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const server = await startFakeServer((_request, response) => sendJson(response, 200, {}))
  const spans = () => [...new Map(received().map((span) => [span.spanId, span])).values()]
  const received = () =>
    server.requests
      .filter((request) => request.method === 'POST' && request.url === '/v1/traces')
      .flatMap((request) => (JSON.parse(request.body) as ExportRequest).resourceSpans ?? [])
      .flatMap((resourceSpans) =>
        (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
          (scope.spans ?? []).map(
            (span): ReceivedSpan => ({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: KINDS[span.kind] ?? 'internal',
              attributes: flatten(span.attributes),
              resource: flatten(resourceSpans.resource?.attributes),
            }),
          ),
        ),
      )
  return { ...server, spans }
}
