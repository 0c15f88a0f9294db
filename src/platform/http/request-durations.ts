/** A sample as prom-client's registry writes it: `metricName{labels} value`. */
interface Sample {
  metricName: string
  labels: Record<string, string | number>
  value: number
}

/** One route pattern, method and status's requests: how many fell in each bucket, their sum and count. */
interface Series {
  labels: { route: string; method: string; status_code: number }
  /** Requests per bucket, not cumulative; the last counts those above every bound (+Inf). */
  inBucket: Float64Array
  sum: number
  count: number
}

/**
 * `http_request_duration_seconds`: a Prometheus histogram of requests by route pattern, method and status,
 * observed on every request. prom-client's Histogram builds a key string from the labels, checks each label
 * and looks a bound up as a string on every observation; here each series is found through maps keyed by
 * the route's pattern and method (the same strings every request, their hashes computed once) and by the
 * status, and its bucket by index. The scrape writes what prom-client's Histogram writes.
 */
export class RequestDurations {
  readonly name = 'http_request_duration_seconds'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #series = new Map<string, Map<string, Map<number, Series>>>()

  constructor(
    readonly help: string,
    /** Upper bounds in seconds, ascending. */
    readonly bounds: readonly number[],
  ) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#series.get(route)
    if (!byMethod) {
      byMethod = new Map()
      this.#series.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (!byStatus) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let series = byStatus.get(status)
    if (!series) {
      series = {
        labels: { route, method, status_code: status },
        inBucket: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      }
      byStatus.set(status, series)
    }
    let bucket = 0
    while (bucket < this.bounds.length && seconds > (this.bounds[bucket] as number)) bucket++
    ;(series.inBucket[bucket] as number)++
    series.sum += seconds
    series.count++
  }

  /** What prom-client's registry writes: cumulative `_bucket` samples up to `+Inf`, then `_sum` and `_count`. */
  async get() {
    const values: Sample[] = []
    for (const byMethod of this.#series.values())
      for (const byStatus of byMethod.values())
        for (const { labels, inBucket, sum, count } of byStatus.values()) {
          let cumulative = 0
          this.bounds.forEach((bound, i) => {
            cumulative += inBucket[i] as number
            values.push({
              metricName: `${this.name}_bucket`,
              labels: { le: bound, ...labels },
              value: cumulative,
            })
          })
          values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count })
          values.push({ metricName: `${this.name}_sum`, labels, value: sum })
          values.push({ metricName: `${this.name}_count`, labels, value: count })
        }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }

  reset(): void {
    this.#series.clear()
  }
}
