import { loadConfigOrExit, startOrExit } from '../lifecycle.js'
import { migrateDatabase, openDatabase } from '../platform/db/connection.js'
import { checkStart } from '../start-checks.js'

/**
 * `npm run db:migrate`: applies the committed migrations to the configured database, then exits. Deploying
 * runs it before the new release starts (docs/deploying.md): production servers never migrate.
 */
const config = loadConfigOrExit()
const database = await startOrExit(async () => {
  await checkStart(config, ['database'])
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
})
try {
  // A wait for a lock on stderr as it happens (a deploy's log says what it waited for); the applied on stdout.
  const log = { info: () => undefined, warn: (line: string) => console.error(line) }
  const applied = await migrateDatabase(
    database,
    { databaseUrl: config.databaseUrl },
    { ...config.migrations, log },
  )
  console.log(JSON.stringify({ migrated: true, database: database.kind, applied }))
} catch (error) {
  console.error(`error: migration failed: ${(error as Error).message.replace(/\s+/g, ' ')}`)
  process.exitCode = 1
} finally {
  await database.close()
}
