import type { Redis } from 'ioredis'
import { startSpan, tracingEnabled } from './tracing.js'

interface Command {
  name: string
  promise: Promise<unknown>
}

/**
 * A client span per command the client sends, named by the command alone: its arguments (keys, values) are
 * never recorded. The client is returned untouched when tracing is off.
 */
export function traceRedisCommands(client: Redis): Redis {
  if (!tracingEnabled()) return client
  const send = client.sendCommand.bind(client)
  // A command sent while disconnected is queued and sent again on reconnection: one span for both.
  const traced = new WeakSet<Command>()
  client.sendCommand = ((command: Command, ...rest: unknown[]) => {
    if (!traced.has(command)) {
      traced.add(command)
      const operation = command.name.toUpperCase()
      const span = startSpan(operation, {
        kind: 'client',
        requireParent: true,
        attributes: {
          'db.system.name': 'redis',
          'db.operation.name': operation,
          'server.address': client.options.host,
          'server.port': client.options.port,
        },
      })
      if (span.recording)
        command.promise.then(
          () => span.end(),
          (error: unknown) => {
            span.fail(error)
            span.end()
          },
        )
    }
    return (send as (...args: unknown[]) => unknown)(command, ...rest)
  }) as Redis['sendCommand']
  return client
}
