import { loadConfigOrExit, startOrExit } from '../lifecycle.js'
import { migrateDatabase, openDatabase } from '../platform/db/connection.js'
import { checkStart } from '../start-checks.js'

/** `npm run db:migrate`: applies the committed migrations to the configured database, then exits. */
const config = loadConfigOrExit()
const database = await startOrExit(async () => {
  await checkStart(config, ['database'])
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
})
try {
  await migrateDatabase(database, { databaseUrl: config.databaseUrl })
  console.log(JSON.stringify({ migrated: true, database: database.kind }))
} catch (error) {
  console.error(`error: migration failed: ${(error as Error).message.replace(/\s+/g, ' ')}`)
  process.exitCode = 1
} finally {
  await database.close()
}
