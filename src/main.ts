import type { AddressInfo } from 'node:net'
import { buildApp } from './app.js'
import { platformUrl } from './cli/admin-client.js'
import { closeOnSignals, listen, loadConfigOrExit, startOrExit } from './lifecycle.js'
import { consoleLogStream } from './platform/log/console-stream.js'
import { checkStart, listenFailure } from './start-checks.js'

/** Process entry: the API and, unless RUN_WORKERS=false, the job workers in one process. */
const config = loadConfigOrExit()
const app = await startOrExit(async () => {
  await checkStart(config, ['addresses', 'database', 'redis'])
  const app = await buildApp(config, { logStream: consoleLogStream(config.nodeEnv) })
  // The address was free a moment ago; taken since, it is still a setting's fault, not a bug.
  await listen(app, config).catch((error: unknown) => {
    throw listenFailure(error, config)
  })
  return app
})
if (config.nodeEnv === 'production' && !config.databaseUrl) {
  app.log.warn(
    `DATABASE_URL is not set: production runs on the embedded database in ${config.dataDir}, one process only`,
  )
}
closeOnSignals(app, { ...config.shutdown, servesHttp: true })

const database = config.databaseUrl ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`
// The port listened on (PORT=0 takes any free one), and where the CLI finds this server when not where it
// looks by default (another terminal may not have the PORT and HOST this one was started with).
const { port } = app.server.address() as AddressInfo
const here = platformUrl({ PORT: String(port), HOST: config.host })
const cli = `${here === platformUrl({}) ? '' : `PLATFORM_URL=${here} `}npm run cli --`
// PUBLIC_BASE_URL: the address the service gives out (OAuth issuer, links), so the one to open.
console.log(
  [
    '',
    `Platform backend at ${config.publicBaseUrl}, listening on ${config.host}:${port} (${database})`,
    `API reference: ${config.publicBaseUrl}/docs`,
    // A demo account has no place on a production server; its accounts are made one by one.
    config.nodeEnv === 'production'
      ? `Manage accounts, users and apps with:  ${cli} --help`
      : `Create an account, a user and a token with:  ${cli} quickstart`,
    '',
  ].join('\n'),
)
