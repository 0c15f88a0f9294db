// The operator's command line, a client of the admin API: `npm run cli -- <command> [flags]`.
// Each command prints one JSON object as the last line of stdout; failures print one line on stderr.
import { loadEnvFile } from '../lifecycle.js'
import { adminToken, createAdminClient, DEFAULT_PLATFORM_URL, platformUrl } from './admin-client.js'
import { commands, findCommand } from './commands.js'
import { CliError, UsageError } from './errors.js'
import { flagsUsage } from './flags.js'

function usage(): string {
  const lines = commands.map(
    (command) => `  ${command.name} ${flagsUsage(command.flags)}\n      ${command.summary}`,
  )
  return [
    'Usage: npm run cli -- <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Each command prints one JSON object as the last line of stdout.',
    'Environment:',
    `  PLATFORM_URL  the server (default ${DEFAULT_PLATFORM_URL})`,
    '  ADMIN_TOKEN   the admin token; unset: read from DATA_DIR/secrets.json (DATA_DIR default ./data)',
  ].join('\n')
}

async function run(argv: string[]): Promise<object | undefined> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) return undefined
  const found = findCommand(argv)
  if (!found) {
    const firstFlag = argv.findIndex((arg) => arg.startsWith('-'))
    const words = argv.slice(0, firstFlag === -1 ? argv.length : firstFlag).join(' ')
    const problem = words ? `unknown command '${words}'` : 'no command before the flags'
    throw new UsageError(`${problem}; run with --help for the list`)
  }
  return found.command.run(found.args, () =>
    createAdminClient(platformUrl(process.env), adminToken(process.env)),
  )
}

try {
  loadEnvFile()
  const result = await run(process.argv.slice(2))
  process.stdout.write(result ? `${JSON.stringify(result)}\n` : `${usage()}\n`)
} catch (error) {
  if (!(error instanceof CliError)) throw error
  // One line, so scripts can show it as is.
  process.stderr.write(`error: ${error.message.replace(/\s+/g, ' ')}\n`)
  process.exitCode = error.exitCode
}
