import { once } from 'node:events'
import type { ConnectFigures, LoadPlan, LoadResult } from './sockets-load.js'
import { runSocketLoad } from './sockets-load.js'

/**
 * The sockets scenario's load generator (child process entry, started by scenarios/sockets.ts): apart
 * from the bench process, which supervises the servers and reads their memory. Over IPC it receives the
 * plan, says when every client is connected, waits to be told to go on, and sends back the result.
 */

/** Messages between the bench and this process. */
export type FromLoad =
  | { kind: 'connected'; figures: ConnectFigures }
  | { kind: 'done'; result: LoadResult }
  | { kind: 'failed'; error: string }
export type ToLoad = { kind: 'plan'; plan: LoadPlan } | { kind: 'proceed' } | { kind: 'finish' }

const tell = (message: FromLoad) => process.send?.(message)

const [first] = (await once(process, 'message')) as [ToLoad]
if (first.kind === 'plan') {
  try {
    const result = await runSocketLoad(first.plan, {
      async connected(figures) {
        const proceed = once(process, 'message')
        tell({ kind: 'connected', figures })
        await proceed
      },
    })
    const finish = once(process, 'message')
    tell({ kind: 'done', result })
    // Told once the bench has read this process's CPU time; exiting of itself writes a --cpu-prof profile.
    await finish
    process.exit(0)
  } catch (error) {
    tell({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  }
}
