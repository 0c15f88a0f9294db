// The operator's command line, a client of the admin API: `npm run cli -- <command> [flags]`.
// Each command prints one JSON object as the last line of stdout; failures print one line on stderr.
import { loadEnvFile } from '../lifecycle.js'
import { StartError } from '../platform/start-error.js'
import { adminToken, createAdminClient, platformUrl } from './admin-client.js'
import { commands, commandUsage, findCommand, meantCommand } from './commands.js'
import { CliError, UsageError } from './errors.js'

function usage(): string {
  const lines = commands.map((command) => `  ${commandUsage(command)}\n      ${command.summary}`)
  return [
    'Usage: npm run cli -- <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Each command prints one JSON object as the last line of stdout.',
    'Environment:',
    '  PLATFORM_URL  the server (default http://127.0.0.1:PORT, with PORT and HOST read as the server does)',
    '  ADMIN_TOKEN   the admin token; unset: read from DATA_DIR/secrets.json (DATA_DIR default ./data)',
  ].join('\n')
}

/** The command's JSON, null when it wrote its output itself, undefined for the usage. */
async function run(argv: string[]): Promise<object | null | undefined> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) return undefined
  const found = findCommand(argv)
  if (!found) {
    const firstFlag = argv.findIndex((arg) => arg.startsWith('-'))
    const words = argv.slice(0, firstFlag === -1 ? argv.length : firstFlag).join(' ')
    if (!words) throw new UsageError('no command before the flags; run with --help for the list')
    const meant = meantCommand(words)
    throw new UsageError(
      `unknown command "${words}"${meant ? `: did you mean "${meant}"?` : '; run with --help for the list'}`,
    )
  }
  return found.command.run(found.args, () =>
    createAdminClient(platformUrl(process.env), adminToken(process.env)),
  )
}

try {
  loadEnvFile()
  const result = await run(process.argv.slice(2))
  if (result !== null) process.stdout.write(result ? `${JSON.stringify(result)}\n` : `${usage()}\n`)
} catch (error) {
  // A broken .env (StartError) is reported as the server reports it.
  if (!(error instanceof CliError || error instanceof StartError)) throw error
  // One line, so scripts can show it as is; a usage error then shows how the command is written.
  const commandUsage = error instanceof UsageError && error.usage ? `${error.usage}\n` : ''
  process.stderr.write(`error: ${error.message.replace(/\s+/g, ' ')}\n${commandUsage}`)
  process.exitCode = error instanceof CliError ? error.exitCode : 1
}
