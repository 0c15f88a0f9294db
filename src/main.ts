import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

/** Process entry: the API and the job workers in one process. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`Configuration error: ${error.message}`)
    process.exit(1)
  }
  const app = await buildApp(config)
  await app.listen({ port: config.port, host: config.host })
  const local = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`
  app.log.info(
    `Platform backend listening on ${local} (API docs at ${local}/docs). ` +
      'Create an account, a user and a token with: npm run cli -- quickstart',
  )

  let closing = false
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return
      closing = true
      app.log.info(`${signal}: finishing in-flight requests and jobs`)
      app.close().then(
        () => process.exit(0),
        (error) => {
          app.log.error({ err: error }, 'shutdown failed')
          process.exit(1)
        },
      )
    })
  }
}

await main()
