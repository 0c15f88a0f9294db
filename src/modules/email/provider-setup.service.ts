import { Invalid } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import type { MailSettings } from './mail-provider.js'
import { MailProviderMisconfigured, type MailSubusersDeps, mailCredentials } from './mail-subusers.service.js'
import type { EventWebhookSettings, InboundSetup, ParseSettings } from './provider-setup.schemas.js'
import { type SendgridClient, SendgridError, sendgridFailure } from './sendgrid.js'

export interface ProviderSetupDeps extends MailSubusersDeps {
  /** MAIL_PROVIDER: settings are set up with SendGrid only. */
  mailProvider: MailSettings['provider']
  sendgrid: SendgridClient
  /** The service's public URL (PUBLIC_BASE_URL), which the provider is told to post to. */
  publicBaseUrl: string
  log: Logger
}

/** The events the spec enables on the event webhook (true) and disables (false). */
export const EVENT_WEBHOOK_EVENTS = {
  delivered: true,
  open: true,
  click: true,
  bounce: true,
  dropped: true,
  spam_report: true,
  unsubscribe: true,
  group_unsubscribe: true,
  group_resubscribe: true,
  deferred: false,
  processed: false,
} as const satisfies Partial<EventWebhookSettings>

/** Where the domain's mail must go for Inbound Parse to see it (SendGrid's documented MX target). */
export const INBOUND_MX_RECORD = { type: 'MX', value: 'mx.sendgrid.net', priority: 10 } as const

// Routes are registered under /v1/integrations and /v1/e alike; the provider is given the shorter one.
const eventsUrl = (publicBaseUrl: string) => `${publicBaseUrl}/v1/e/mailprovider/webhook`
const inboundUrl = (publicBaseUrl: string) => `${publicBaseUrl}/v1/e/mailprovider/webhook/inbound`

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * The hostname as SendGrid and DNS expect it (lower case, no trailing dot), or a 400. At least two
 * labels and a top-level label that is not all digits: an MX record is set on a domain, not on
 * `localhost` or an IP address.
 */
export function receivingHostname(raw: string): string {
  const hostname = raw.trim().toLowerCase().replace(/\.$/, '')
  const labels = hostname.split('.')
  const valid =
    hostname.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    !/^\d+$/.test(labels[labels.length - 1] as string)
  if (!valid) throw new Invalid('hostname must be a domain name, such as mail.example.com')
  return hostname
}

/**
 * The subuser whose settings are changed, with the parent key to act for it: settings always act on
 * behalf of a subuser, since without On-Behalf-Of SendGrid would change the parent account's own.
 */
async function settingsSubuser(deps: ProviderSetupDeps, accountId: string, what: string): Promise<string> {
  if (deps.mailProvider !== 'sendgrid') throw new Invalid(`${what} needs MAIL_PROVIDER=sendgrid`)
  const { subuser } = await mailCredentials(deps, accountId)
  if (!subuser) throw new Invalid('No email provider subuser is set for this account')
  // A subuser's own key sends mail but cannot change settings on behalf of anyone.
  if (!deps.sendgridApiKey) throw new MailProviderMisconfigured()
  return subuser
}

async function refusedAs<T>(deps: ProviderSetupDeps, refused: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (!(error instanceof SendgridError)) throw error
    deps.log.warn({ status: error.status, errors: error.errors }, `email provider refused ${refused}`)
    throw sendgridFailure(error, refused)
  }
}

/**
 * Points the subuser's event webhook at our events URL with the spec's events. SendGrid keeps one
 * such webhook per user and PATCH writes it whole, so a repeated call updates it, never duplicates.
 */
export async function setUpEventWebhook(
  deps: ProviderSetupDeps,
  accountId: string,
): Promise<EventWebhookSettings> {
  const subuser = await settingsSubuser(deps, accountId, 'Webhook set-up')
  return refusedAs(deps, 'the event webhook settings', () =>
    deps.sendgrid.updateEventWebhookSettings(subuser, {
      enabled: true,
      url: eventsUrl(deps.publicBaseUrl),
      ...EVENT_WEBHOOK_EVENTS,
    }),
  )
}

/**
 * Configures Inbound Parse for the hostname (created, or updated when SendGrid has it already) and
 * returns the MX record the domain must carry for mail to reach it.
 */
export async function setUpInboundParse(
  deps: ProviderSetupDeps,
  accountId: string,
  rawHostname: string,
): Promise<InboundSetup> {
  const hostname = receivingHostname(rawHostname)
  const subuser = await settingsSubuser(deps, accountId, 'Inbound set-up')
  const wanted: ParseSettings = {
    hostname,
    url: inboundUrl(deps.publicBaseUrl),
    spam_check: true,
    send_raw: false,
  }
  const settings = await refusedAs(deps, 'the inbound parse settings', async () => {
    const existing = await deps.sendgrid.getParseSettings(subuser, hostname)
    if (existing) return deps.sendgrid.updateParseSettings(subuser, wanted)
    try {
      return await deps.sendgrid.createParseSettings(subuser, wanted)
    } catch (error) {
      // A concurrent set-up created it between our read and our create: SendGrid refuses the
      // duplicate with a 400, and updating what is there now gives the same end state.
      if (!(error instanceof SendgridError) || error.status !== 400) throw error
      if (!(await deps.sendgrid.getParseSettings(subuser, hostname))) throw error
      return deps.sendgrid.updateParseSettings(subuser, wanted)
    }
  })
  return { settings, mx_record: { ...INBOUND_MX_RECORD, host: hostname } }
}
