import { buildApp } from './app.js'
import { closeOnSignals, loadConfigOrExit, startOrExit } from './lifecycle.js'
import { consoleLogStream } from './platform/log/console-stream.js'
import { checkStart } from './start-checks.js'

/**
 * Job workers alone, for deployments that scale them apart from the API (which then runs with
 * RUN_WORKERS=false). The app is built for its job definitions and wiring but never listens.
 */
const config = loadConfigOrExit()
const app = await startOrExit(async () => {
  await checkStart(config, ['database', 'redis'])
  const app = await buildApp(
    { ...config, jobs: { ...config.jobs, runWorkers: true } },
    { logStream: consoleLogStream(config.nodeEnv) },
  )
  await app.ready()
  return app
})
// No HTTP to drain and no readiness to answer: the delay is for a load balancer, which never sends a worker anything.
closeOnSignals(app, { ...config.shutdown, delayMs: 0, servesHttp: false })
app.log.info('Job workers started')
