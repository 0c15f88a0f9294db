/**
 * Response times in 10 µs buckets up to autocannon's 10 s request timeout: percentiles stay exact to
 * the bucket over any number of rounds, in constant memory (4 MB).
 */
export type LatencyHistogram = Uint32Array

const BUCKETS_PER_MS = 100
const LIMIT_MS = 10_000

export function newLatencyHistogram(): LatencyHistogram {
  return new Uint32Array(LIMIT_MS * BUCKETS_PER_MS + 1)
}

export function recordLatency(histogram: LatencyHistogram, ms: number): void {
  const bucket = Math.min(Math.round(ms * BUCKETS_PER_MS), histogram.length - 1)
  histogram[bucket] = (histogram[bucket] ?? 0) + 1
}

/** The latency (ms) at or below which `fraction` of the responses were; 0 when nothing was recorded. */
export function latencyPercentile(histogram: LatencyHistogram, fraction: number): number {
  const total = histogram.reduce((sum, count) => sum + count, 0)
  const rank = Math.max(1, Math.ceil(fraction * total))
  let seen = 0
  for (let bucket = 0; bucket < histogram.length; bucket++) {
    seen += histogram[bucket] ?? 0
    if (seen >= rank) return bucket / BUCKETS_PER_MS
  }
  return 0
}
