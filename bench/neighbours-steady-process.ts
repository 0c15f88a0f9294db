import { setTimeout as delay } from 'node:timers/promises'
import {
  type FromSteady,
  type Phase,
  runSteady,
  type SteadyPlan,
  type ToSteady,
} from './neighbours-steady.js'

/**
 * Account B's steady load in a process of its own (started by scenarios/neighbours.ts), so that A's flood,
 * driven from the bench process, cannot delay B's clock: over IPC it receives the plan, says when B's
 * receivers are connected, is told each phase as it begins and when to stop, and sends back the figures.
 */
const tell = (message: FromSteady) => process.send?.(message)

let plan: SteadyPlan | undefined
let phase: Phase | undefined
let stopped = false
process.on('message', (message: ToSteady) => {
  if (message.kind === 'plan') plan = message.plan
  else if (message.kind === 'phase') phase = message.phase
  else stopped = true
})
while (!plan) await delay(5)
try {
  const result = await runSteady(plan, {
    ready: () => tell({ kind: 'ready' }),
    phase: () => phase,
    stopped: () => stopped,
  })
  tell({ kind: 'done', result })
} catch (error) {
  tell({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) })
}
process.disconnect?.()
