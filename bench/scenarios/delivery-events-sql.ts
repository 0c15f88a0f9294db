import { type EachRequest, postEach } from '../each.js'
import { loadLine, sampleMachine } from '../machine.js'
import { planSql, requestInputs, routeAgainstSql, sqlFailed, sqlLines } from '../route-vs-sql.js'
import type { Target } from '../scenario.js'

// A few replays before the timed ones, so that the replay's connections are open and its statements prepared.
const WARMUP_REPLAYS = 20

/** What the second phase found: its lines, whether it failed, and how many raw batches it added. */
export interface IngestAgainstSql {
  lines: string[]
  failed: boolean
  batchesAdded: number
}

/**
 * The ingest route against its own SQL (storing the raw batch and queueing its job, in one transaction),
 * after the end-to-end figures: both sides redeliver the run's batches, as SendGrid does, so that the
 * processing they queue (one job each, here and there) finds events already stored and adds none.
 * `processed` waits until every queued batch is processed.
 */
export async function ingestAgainstSql(
  target: Target,
  url: string,
  bodies: string[],
  connections: number,
  processed: () => Promise<unknown>,
  signedHeaders: (body: string) => Record<string, string>,
): Promise<IngestAgainstSql> {
  const redeliveries = (count: number, offset: number): EachRequest[] =>
    Array.from({ length: count }, (_, i) => {
      const body = bodies[(offset + i) % bodies.length] as string
      return { body, headers: signedHeaders(body) }
    })
  const plan = await planSql(target, {
    url,
    contentType: 'application/json',
    recorded: { batch: redeliveries(3, 0) },
    inputs: requestInputs,
    replays: redeliveries(WARMUP_REPLAYS + bodies.length, 1).map((request) => ({ kind: 'batch', request })),
    warmupReplays: WARMUP_REPLAYS,
    connections,
  })
  if (!plan)
    return {
      lines: ['SQL only: not measured (the server runs without the SQL recorder)'],
      failed: false,
      batchesAdded: 0,
    }
  try {
    const send = (requests: EachRequest[]) => postEach(url, 'application/json', requests, connections)
    const before = sampleMachine([target.pid])
    // Each round's batches are processed before the next round: the server's job handlers share its one
    // thread with the route, and a backlog left by either side would slow the route's next round.
    const compared = await routeAgainstSql(redeliveries(bodies.length, 2), send, plan, processed)
    const after = sampleMachine([target.pid])
    const route = compared.route
    const ok = route.answers.filter((a) => a.status === 200).length
    const events = (route.answers.length * JSON.parse(bodies[0] ?? '[]').length) / route.seconds
    return {
      failed: route.errors > 0 || ok !== bodies.length || sqlFailed(compared),
      batchesAdded: plan.recorded.requests + bodies.length + WARMUP_REPLAYS + bodies.length,
      lines: [
        `ingest again, redelivering the ${bodies.length} batches, against its SQL:`,
        `route: ${route.answers.length} posts in ${route.seconds.toFixed(2)} s   ${events.toFixed(0)} events/s   ` +
          `p50 ${route.p50Ms.toFixed(0)} ms, p99 ${route.p99Ms.toFixed(0)} ms   answered 200: ${ok}, connection errors ${route.errors}`,
        ...sqlLines(compared, plan),
        loadLine(before, after),
      ],
    }
  } finally {
    await plan.end()
  }
}
