/**
 * Preloaded into a server by the sockets scenario (NODE_OPTIONS `--import`): on the IPC message
 * `{ kind: 'memory-probe' }` it collects garbage and answers `process.memoryUsage()`, so that the bench reads
 * the heap a server holds for its sockets without a route of the product. Plain JavaScript: the server runs
 * as `npm start` runs it, without a TypeScript loader.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc')

process.on('message', (message) => {
  if (message?.kind !== 'memory-probe') return
  collectGarbage()
  process.send?.({ kind: 'memory', usage: process.memoryUsage() })
})
// Listening must not keep the server alive once it closes.
process.channel?.unref()
