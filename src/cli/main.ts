// The operator's command line, a client of the admin API: `npm run cli -- <command> [flags]`.
// Each command prints one JSON object as the last line of stdout (a table with --format table); failures
// print one line on stderr.
import { readFileSync } from 'node:fs'
import { loadEnvFile } from '../lifecycle.js'
import { StartError } from '../platform/start-error.js'
import { adminToken, createAdminClient, platformUrl } from './admin-client.js'
import { type Command, commands, commandUsage, findCommand, meantCommand } from './commands.js'
import { CliError, UsageError } from './errors.js'
import { render, takeFormat } from './output.js'

const OUTPUT = [
  'Each command prints one JSON object as the last line of stdout; --format table prints a table for people',
  'instead (anywhere on the line: npm run cli -- account list --format table).',
]

function usage(): string {
  const lines = commands.map((command) => `  ${commandUsage(command)}\n      ${command.summary}`)
  return [
    'Usage: npm run cli -- <command> [flags] [--format json|table]',
    '       npm run cli -- help [<command>]    npm run cli -- <command> --help    npm run cli -- --version',
    '',
    'Commands:',
    ...lines,
    '',
    ...OUTPUT,
    'Environment:',
    '  PLATFORM_URL  the server (default http://127.0.0.1:PORT, with PORT and HOST read as the server does)',
    '  ADMIN_TOKEN   the admin token; unset: read from DATA_DIR/secrets.json (DATA_DIR default ./data)',
  ].join('\n')
}

/** `account get --help`: how the command is written, what it does, and how it prints. */
const commandHelp = (command: Command) =>
  [`Usage: npm run cli -- ${commandUsage(command)}`, '', command.summary, '', ...OUTPUT].join('\n')

/** The version of package.json, beside src/ and dist/ alike. */
const version = () =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version

/** The refusal of words that name no command, with the one most likely meant. */
function unknownCommand(argv: string[]): UsageError {
  const firstFlag = argv.findIndex((arg) => arg.startsWith('-'))
  const words = argv.slice(0, firstFlag === -1 ? argv.length : firstFlag).join(' ')
  if (!words) return new UsageError('no command before the flags; run with --help for the list')
  const meant = meantCommand(words)
  return new UsageError(
    `unknown command "${words}"${meant ? `: did you mean "${meant}"?` : '; run with --help for the list'}`,
  )
}

/** What to print on stdout: a command's output, its help or the usage; null when the command wrote its own. */
async function run(argv: string[]): Promise<string | null> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) return version()
  if (argv[0] === 'help') {
    const asked = argv.slice(1)
    if (asked.length === 0) return usage()
    const found = findCommand(asked)
    if (!found || found.args.length > 0) throw unknownCommand(asked)
    return commandHelp(found.command)
  }
  const { format, args } = takeFormat(argv)
  const found = findCommand(args)
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    if (found) return commandHelp(found.command)
    if (args[0] === undefined || args[0].startsWith('-')) return usage()
  }
  if (!found) throw unknownCommand(args)
  const result = await found.command.run(found.args, () =>
    createAdminClient(platformUrl(process.env), adminToken(process.env)),
  )
  return result === null ? null : render(result, format)
}

try {
  loadEnvFile()
  const printed = await run(process.argv.slice(2))
  if (printed !== null) process.stdout.write(`${printed}\n`)
} catch (error) {
  // A broken .env (StartError) is reported as the server reports it.
  if (!(error instanceof CliError || error instanceof StartError)) throw error
  // One line, so scripts can show it as is; a usage error then shows how the command is written.
  const commandUsage = error instanceof UsageError && error.usage ? `${error.usage}\n` : ''
  process.stderr.write(`error: ${error.message.replace(/\s+/g, ' ')}\n${commandUsage}`)
  process.exitCode = error instanceof CliError ? error.exitCode : 1
}
