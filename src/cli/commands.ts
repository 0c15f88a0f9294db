import { randomBytes } from 'node:crypto'
import {
  ACCOUNT_STATUSES,
  ACCOUNT_TIERS,
  SETTABLE_ACCOUNT_STATUSES,
  USER_PERMISSIONS,
} from '../modules/accounts/accounts.schemas.js'
import type { AdminClient } from './admin-client.js'
import { CliError, UsageError } from './errors.js'
import {
  type FlagSpecs,
  type FlagValues,
  flagsUsage,
  id,
  oneOf,
  parseFlags,
  positiveInteger,
  repeated,
  required,
  text,
  toggle,
} from './flags.js'
import { closest } from './suggest.js'

/**
 * One CLI command: its words, its flags, and the admin API calls that produce the JSON it prints (null:
 * the command wrote its output itself, an export to stdout).
 */
export interface Command {
  name: string
  summary: string
  flags: FlagSpecs
  run(args: string[], admin: () => AdminClient): Promise<object | null>
}

/** Binds a command's typed flags to its handler; flags are checked before the admin client is made. */
function command<S extends FlagSpecs>(definition: {
  name: string
  summary: string
  flags: S
  /** Checks across flags, throwing a UsageError, before any token is looked for. */
  check?(flags: FlagValues<S>): void
  run(flags: FlagValues<S>, admin: AdminClient): Promise<object | null>
}): Command {
  return {
    ...definition,
    run: (args, admin) => {
      let flags: FlagValues<S>
      try {
        flags = parseFlags(definition.flags, args)
        definition.check?.(flags)
      } catch (error) {
        if (!(error instanceof UsageError)) throw error
        throw new UsageError(error.message, `Usage: npm run cli -- ${commandUsage(definition)}`)
      }
      return definition.run(flags, admin())
    },
  }
}

/** `account get --id ID`: a command's words and its flags. */
export function commandUsage(command: { name: string; flags: FlagSpecs }): string {
  return `${command.name} ${flagsUsage(command.flags)}`.trimEnd()
}

type Row = { _id: string }
const words = (value: string) => value.split(/\s+/).filter(Boolean)
const path = (...segments: string[]) => segments.map((segment) => `/${encodeURIComponent(segment)}`).join('')

/** A query string of the flags given (undefined ones left out), with its `?`; empty when none is. */
function queryOf(values: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) if (value !== undefined) query.set(name, String(value))
  return query.size === 0 ? '' : `?${query}`
}

function mintToken(admin: AdminClient, userId: string, accountId: string, ttl?: number) {
  return admin.request<{ token: string }>('POST', '/tokens', { user_id: userId, account_id: accountId, ttl })
}

export const commands: Command[] = [
  command({
    name: 'account create',
    summary: 'Create an account (a sub-account with --parent)',
    flags: {
      name: required(text('NAME')),
      parent: id(),
      status: oneOf(SETTABLE_ACCOUNT_STATUSES),
      tier: oneOf(ACCOUNT_TIERS),
      'listings-entity': text('ENTITY'),
    },
    run: (flags, admin) =>
      admin.request('POST', '/accounts', {
        name: flags.name,
        parent_account: flags.parent,
        status: flags.status,
        tier: flags.tier,
        listings_entity: flags['listings-entity'],
      }),
  }),
  command({
    name: 'account get',
    summary: 'Read an account',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('GET', path('accounts', flags.id)),
  }),
  command({
    name: 'account update',
    summary: 'Change the status, listings entity, name or tier of an account',
    flags: {
      id: required(id()),
      status: oneOf(SETTABLE_ACCOUNT_STATUSES),
      'listings-entity': text('ENTITY'),
      name: text('NAME'),
      tier: oneOf(ACCOUNT_TIERS),
    },
    check: ({ id: _, ...changes }) => {
      if (Object.values(changes).every((value) => value === undefined)) {
        throw new UsageError('nothing to update: give --status, --listings-entity, --name or --tier')
      }
    },
    run: (flags, admin) =>
      admin.request('PATCH', path('accounts', flags.id), {
        status: flags.status,
        listings_entity: flags['listings-entity'],
        name: flags.name,
        tier: flags.tier,
      }),
  }),
  command({
    name: 'account list',
    summary:
      'List accounts by name, or those whose name starts with --name (any case), of --status, below --parent; ' +
      'prints next_cursor, for --cursor, while more follow',
    flags: {
      name: text('NAME'),
      status: oneOf(ACCOUNT_STATUSES),
      parent: id(),
      limit: positiveInteger('N'),
      cursor: text('CURSOR'),
    },
    run: async (flags, admin) => {
      const { rows, nextCursor } = await admin.page(`/accounts${queryOf(flags)}`)
      return { accounts: rows, next_cursor: nextCursor }
    },
  }),
  command({
    name: 'account export',
    summary:
      'Write everything an account and its sub-accounts own as NDJSON, to stdout or --out FILE (secrets left out)',
    flags: { id: required(id()), out: text('FILE') },
    run: async (flags, admin) => {
      const end = await exportWhole(admin.download(`${path('accounts', flags.id)}/export`, flags.out))
      // To stdout, the export is the output: nothing may follow its last line.
      return flags.out ? { file: flags.out, ...end } : null
    },
  }),
  command({
    name: 'account remove',
    summary:
      'Remove an account and its sub-accounts: refused at once, their rows and provider state removed by a background job',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('DELETE', path('accounts', flags.id)),
  }),
  command({
    name: 'account removal',
    summary: "Read how far an account's removal is: its status and the rows deleted, table by table",
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('GET', `${path('accounts', flags.id)}/removal`),
  }),
  command({
    name: 'user create',
    summary: 'Create a user who is a member of an account (their main one with --main)',
    flags: {
      email: required(text('EMAIL')),
      password: required(text('PASSWORD')),
      name: required(text('NAME')),
      account: required(id()),
      main: toggle(),
    },
    run: (flags, admin) =>
      admin.request('POST', '/users', {
        email: flags.email,
        password: flags.password,
        name: flags.name,
        account_id: flags.account,
        main: flags.main,
      }),
  }),
  command({
    name: 'user get',
    summary: 'Read a user with their memberships',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('GET', path('users', flags.id)),
  }),
  command({
    name: 'user find',
    summary: 'Find the user with an email (any case), with the accounts they belong to',
    flags: { email: required(text('EMAIL')) },
    run: async (flags, admin) => {
      const { rows } = await admin.page(`/users${queryOf({ email: flags.email })}`)
      const [user] = rows
      if (!user) throw new CliError(`no user has the email ${flags.email}`)
      return user
    },
  }),
  command({
    name: 'user remove',
    summary:
      "Remove a user: every membership ends, the person's data is erased and every token of theirs is refused",
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('DELETE', path('users', flags.id)),
  }),
  command({
    name: 'user reset-password',
    summary:
      "Set a user's password, or without --password a generated one printed this once; their apps' grants and their sessions end",
    flags: { id: required(id()), password: text('PASSWORD') },
    run: (flags, admin) =>
      admin.request('POST', `${path('users', flags.id)}/password`, { password: flags.password }),
  }),
  command({
    name: 'member add',
    summary: 'Make a user a member of another account',
    flags: { user: required(id()), account: required(id()), main: toggle() },
    run: async (flags, admin) => {
      const membership = await admin.request('POST', `${path('users', flags.user)}/memberships`, {
        account_id: flags.account,
        main: flags.main,
      })
      // The membership alone does not say whose it is.
      return { user_id: flags.user, ...membership }
    },
  }),
  command({
    name: 'member remove',
    summary: "Remove a user from an account: their tokens and their apps' grants there stop working",
    flags: { user: required(id()), account: required(id()) },
    run: (flags, admin) => admin.request('DELETE', path('accounts', flags.account, 'users', flags.user)),
  }),
  command({
    name: 'user permissions',
    summary: `Replace a user's platform-wide permissions (${USER_PERMISSIONS.join(', ')}); none given takes all away`,
    flags: { id: required(id()), permission: repeated('PERMISSION') },
    run: (flags, admin) =>
      admin.request('PUT', `${path('users', flags.id)}/permissions`, { permissions: flags.permission ?? [] }),
  }),
  command({
    name: 'contact create',
    summary: 'Create a contact in an account',
    flags: {
      account: required(id()),
      email: required(text('EMAIL')),
      name: text('NAME'),
      phone: text('PHONE'),
    },
    run: (flags, admin) =>
      admin.request('POST', `${path('accounts', flags.account)}/contacts`, {
        email: flags.email,
        name: flags.name,
        phone: flags.phone,
      }),
  }),
  command({
    name: 'credits grant',
    summary: 'Add credits to an account (applied once per --reference)',
    flags: { account: required(id()), amount: required(positiveInteger('N')), reference: text('REF') },
    run: (flags, admin) =>
      admin.request('POST', `${path('accounts', flags.account)}/credits`, {
        amount: flags.amount,
        reference: flags.reference,
      }),
  }),
  command({
    name: 'credits balance',
    summary: "Read an account's credit balance",
    flags: { account: required(id()) },
    run: (flags, admin) => admin.request('GET', `${path('accounts', flags.account)}/credits`),
  }),
  command({
    name: 'mail-subuser set',
    summary: "Send an account's mail through its own SendGrid subuser (the key is stored encrypted)",
    flags: {
      account: required(id()),
      username: required(text('USERNAME')),
      'api-key': required(text('KEY')),
    },
    run: (flags, admin) =>
      admin.request('PUT', `${path('accounts', flags.account)}/mail-subuser`, {
        username: flags.username,
        api_key: flags['api-key'],
      }),
  }),
  command({
    name: 'support-inbox create',
    summary: 'Create a support inbox (--type email_inbound --default receives replies to sent email)',
    flags: {
      account: required(id()),
      type: required(text('TYPE')),
      name: required(text('NAME')),
      default: toggle(),
    },
    run: (flags, admin) =>
      admin.request('POST', `${path('accounts', flags.account)}/support-inboxes`, {
        type: flags.type,
        name: flags.name,
        is_default: flags.default,
      }),
  }),
  command({
    name: 'app create',
    summary:
      'Register a third-party OAuth app; prints its client_id, client_secret and webhook_secret (shown this once)',
    flags: {
      name: required(text('NAME')),
      'redirect-uri': required(repeated('URI')),
      scopes: required(text('"S1 S2"')),
      active: toggle(),
      public: toggle(),
      'webhook-url': text('URL'),
    },
    run: (flags, admin) =>
      admin.request('POST', '/oauth/apps', {
        name: flags.name,
        redirect_uris: flags['redirect-uri'],
        scopes: words(flags.scopes),
        active: flags.active,
        public: flags.public,
        webhook_url: flags['webhook-url'],
      }),
  }),
  command({
    name: 'app list',
    summary: 'List OAuth apps, newest first',
    flags: { page: positiveInteger('N'), limit: positiveInteger('N') },
    run: async (flags, admin) => {
      const query = new URLSearchParams()
      if (flags.page) query.set('page', String(flags.page))
      if (flags.limit) query.set('limit', String(flags.limit))
      return { apps: await admin.request<object[]>('GET', `/oauth/apps?${query}`) }
    },
  }),
  command({
    name: 'app get',
    summary: 'Read an OAuth app',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('GET', path('oauth', 'apps', flags.id)),
  }),
  command({
    name: 'app update',
    summary: "Change an app's name, redirect URIs, scopes or webhook URL (the lists are replaced whole)",
    flags: {
      id: required(id()),
      name: text('NAME'),
      'redirect-uri': repeated('URI'),
      scopes: text('"S1 S2"'),
      'webhook-url': text('URL'),
    },
    check: ({ id: _, ...changes }) => {
      if (Object.values(changes).every((value) => value === undefined)) {
        throw new UsageError('nothing to update: give --name, --redirect-uri, --scopes or --webhook-url')
      }
    },
    run: (flags, admin) =>
      admin.request('PATCH', path('oauth', 'apps', flags.id), {
        name: flags.name,
        redirect_uris: flags['redirect-uri'],
        scopes: flags.scopes === undefined ? undefined : words(flags.scopes),
        webhook_url: flags['webhook-url'],
      }),
  }),
  command({
    name: 'app activate',
    summary: 'Take an OAuth app out of development mode, so that /authorize serves it',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('PATCH', path('oauth', 'apps', flags.id), { active: true }),
  }),
  command({
    name: 'app rotate-secret',
    summary: 'Give an OAuth app a new client secret (printed this once); the old one stops working',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('POST', `${path('oauth', 'apps', flags.id)}/secret`),
  }),
  command({
    name: 'app rotate-webhook-secret',
    summary: 'Give an OAuth app a new webhook signing secret (printed this once); it signs from now on',
    flags: { id: required(id()) },
    run: (flags, admin) => admin.request('POST', `${path('oauth', 'apps', flags.id)}/webhook-secret`),
  }),
  command({
    name: 'token',
    summary: 'Mint a platform JWT for a member of an account (default lifetime 3600 s)',
    flags: { user: required(id()), account: required(id()), ttl: positiveInteger('SECONDS') },
    run: async (flags, admin) => {
      const { token } = await mintToken(admin, flags.user, flags.account, flags.ttl)
      return { token }
    },
  }),
  command({
    name: 'quickstart',
    summary: 'Create an account, a main user of it and a token; prints the password once',
    flags: { name: text('NAME'), email: text('EMAIL'), password: text('PASSWORD') },
    run: async (flags, admin) => {
      const email = flags.email ?? `demo-${randomBytes(4).toString('hex')}@example.com`
      const password = flags.password ?? randomBytes(12).toString('base64url')
      const account = await admin.request<Row>('POST', '/accounts', { name: flags.name ?? 'Demo account' })
      const user = await admin.request<Row>('POST', '/users', {
        email,
        password,
        name: 'Demo user',
        account_id: account._id,
        main: true,
      })
      const { token } = await mintToken(admin, user._id, account._id)
      return { account_id: account._id, user_id: user._id, email, password, token }
    },
  }),
]

/** An export's last line, `{"export_end": {rows, rows_by_table}}`; without it the export was cut short. */
async function exportWhole(download: Promise<string>): Promise<{ rows: number }> {
  const lastLine = await download
  try {
    const { export_end } = JSON.parse(lastLine)
    if (typeof export_end?.rows === 'number') return { rows: export_end.rows }
  } catch {
    // Falls through: a cut line is not JSON.
  }
  throw new CliError('the export ended before its last line: it is incomplete, run it again')
}

/** The command named by the leading words of `argv`, and the arguments after those words. */
export function findCommand(argv: string[]): { command: Command; args: string[] } | undefined {
  for (const candidate of commands) {
    const words = candidate.name.split(' ')
    if (words.every((word, index) => argv[index] === word)) {
      return { command: candidate, args: argv.slice(words.length) }
    }
  }
  return undefined
}

/** The command `typed` (the words before the first flag) most likely meant, for a mistyped one. */
export const meantCommand = (typed: string) =>
  closest(
    typed,
    commands.map((command) => command.name),
  )
