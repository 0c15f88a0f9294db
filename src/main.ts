import { buildApp } from './app.js'
import { ConfigError } from './config.js'
import { closeOnSignals, loadConfigOrExit } from './lifecycle.js'
import { DataDirInUse } from './platform/db/data-dir-lock.js'

/** Process entry: the API and, unless RUN_WORKERS=false, the job workers in one process. */
const config = loadConfigOrExit()
const app = await buildApp(config).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`Configuration error: ${error.message}`)
  else if (error instanceof DataDirInUse) console.error(`Cannot start: ${error.message}`)
  else throw error
  process.exit(1)
})
if (config.nodeEnv === 'production' && !config.databaseUrl) {
  app.log.warn(
    `DATABASE_URL is not set: production runs on the embedded database in ${config.dataDir}, one process only`,
  )
}
await app.listen({ port: config.port, host: config.host })
closeOnSignals(app, config.shutdown)

const database = config.databaseUrl ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`
// PUBLIC_BASE_URL: the address the service gives out (OAuth issuer, links), so the one to open.
console.log(
  [
    '',
    `Platform backend at ${config.publicBaseUrl}, listening on ${config.host}:${config.port} (${database})`,
    `API reference: ${config.publicBaseUrl}/docs`,
    'Create an account, a user and a token with:  npm run cli -- quickstart',
    '',
  ].join('\n'),
)
