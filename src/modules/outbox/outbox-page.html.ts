import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { escapeHtml } from '../../platform/http/html.js'
import type { SentMail, SentMailLine } from '../email/sent-mail.service.js'
import type { SentSms } from '../reviews/sms-outbox.service.js'
import { DEFAULT_LIMIT } from './outbox-page.schemas.js'

/**
 * The operator's outbox pages: server-rendered, no script, no outside asset. Every value is escaped by `html`;
 * a message's own HTML never enters these pages, only the sandboxed frame of its own URL.
 */

class Markup {
  constructor(readonly text: string) {}
}

function piece(value: unknown): string {
  if (value instanceof Markup) return value.text
  if (Array.isArray(value)) return value.map(piece).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}

/** A template whose every value is escaped, except markup made by `html` itself. */
function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  return new Markup(strings.reduce((out, string, i) => out + piece(values[i - 1]) + string))
}

/** Where the pages are served (`/v1/admin/outbox`): every link and form is built from it. */
export interface PageFrame {
  base: string
}

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  header { background: #1d2330; color: #fff; padding: .6rem 1.5rem; display: flex; gap: 1.5rem; align-items: center; }
  header a { color: #fff; } header a[aria-current=page] { font-weight: 700; text-decoration: none; }
  header form { margin-left: auto; } main { padding: 1rem 1.5rem; max-width: 80rem; }
  h1 { font-size: 1.4rem; } table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dt { font-weight: 600; }
  dd { margin: 0; } pre { background: #fff; padding: .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
  iframe { width: 100%; height: 30rem; border: 1px solid #9aa1ad; background: #fff; resize: vertical; }
  button { font: inherit; } .error { background: #fdecec; color: #8a1c1c; padding: .75rem; }
  nav.pages { margin: 1rem 0; display: flex; gap: 1rem; } .muted { color: #5b6473; }`

const CHANNELS = [
  { name: 'Email', path: '' },
  { name: 'SMS', path: '/sms' },
] as const

function page(
  frame: PageFrame,
  title: string,
  body: Markup,
  options: { signedIn: boolean; channel?: string },
): string {
  const nav = options.signedIn
    ? html`<header><strong>Outbox</strong>${CHANNELS.map(
        (channel) =>
          html`<a href="${frame.base}${channel.path}"${channel.name === options.channel ? html` aria-current="page"` : ''}>${channel.name}</a>`,
      )}<form method="post" action="${frame.base}/sign-out"><button type="submit">Sign out</button></form></header>`
    : ''
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title><style>${new Markup(STYLE)}</style></head>
<body>${nav}<main>${body}</main></body></html>`.text
  }`
}

const time = (at: Date | string) => {
  const iso = new Date(at).toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`
}

/** The sign-in form: the admin token is posted once, and a session cookie made from it is set. */
export function signInPage(frame: PageFrame, options: { next?: string; error?: string } = {}): string {
  return page(
    frame,
    'Sign in to the outbox',
    html`<h1>Sign in to the outbox</h1>
<p>Sent email and SMS of every account. Sign in with the service's admin token (<code>ADMIN_TOKEN</code>).</p>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${frame.base}/sign-in">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus>
${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
<button type="submit">Sign in</button></form>`,
    { signedIn: false },
  )
}

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  429: 'Too many requests',
}

export function errorPage(frame: PageFrame, status: number, message: string): string {
  const title = ERROR_TITLES[status] ?? 'Refused'
  return page(
    frame,
    title,
    html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p><a href="${frame.base}">Back to the outbox</a></p>`,
    { signedIn: true },
  )
}

interface ListFrame extends PageFrame {
  /** The path of the list, under `base`: '' for email, '/sms'. */
  path: string
  accountId: string | undefined
  names: Map<string, string>
  pagination: Pagination | CursorPagination
  /** Reads on after the list's last line (see `paginateList`). */
  nextCursor: string | null
}

const listUrl = (frame: ListFrame, query: { account_id?: string; page?: number; cursor?: string }) => {
  const params = new URLSearchParams()
  if (query.account_id) params.set('account_id', query.account_id)
  if (query.page && query.page > 1) params.set('page', String(query.page))
  if (query.cursor) params.set('cursor', query.cursor)
  if (frame.pagination.limit !== DEFAULT_LIMIT) params.set('limit', String(frame.pagination.limit))
  const search = params.toString()
  return `${frame.base}${frame.path}${search ? `?${search}` : ''}`
}

const accountCell = (frame: ListFrame, accountId: string) =>
  html`<a href="${listUrl(frame, { account_id: accountId })}" title="Only this account">${frame.names.get(accountId) ?? accountId}</a>`

/**
 * The pages before and after. By page: numbered, then, past the pages of a capped total, older lines by
 * cursor. By cursor: back to the newest, and on to the older.
 */
function pager(frame: ListFrame): Markup {
  const account = frame.accountId
  const older = (query: { page?: number; cursor?: string }) =>
    html`<a href="${listUrl(frame, { account_id: account, ...query })}">Older</a>`
  if (!('page' in frame.pagination)) {
    return html`<nav class="pages" aria-label="Pages"><a href="${listUrl(frame, { account_id: account })}">Newest</a>${
      frame.nextCursor ? older({ cursor: frame.nextCursor }) : ''
    }</nav>`
  }
  const { page, pages, total_exact } = frame.pagination
  const next =
    page < pages
      ? older({ page: page + 1 })
      : total_exact === false && frame.nextCursor
        ? older({ cursor: frame.nextCursor })
        : ''
  return html`<nav class="pages" aria-label="Pages">${
    page > 1 ? html`<a href="${listUrl(frame, { account_id: account, page: page - 1 })}">Newer</a>` : ''
  }<span>Page ${page} of ${Math.max(pages, 1)}${total_exact === false ? '+' : ''}</span>${next}</nav>`
}

/** How many lines the list holds, when it was counted: `1000+` beyond the count's cap. */
const countOf = (pagination: Pagination | CursorPagination) =>
  'total' in pagination ? `${pagination.total}${pagination.total_exact === false ? '+' : ''} ` : ''

/** The account filter, the list (or why it is empty), and the pages before and after. */
function listBody(frame: ListFrame, noun: string, head: string[], rows: Markup[]): Markup {
  const account = frame.accountId
  const filter = html`<form method="get" action="${frame.base}${frame.path}" role="search">
<label for="account_id">Account id</label>
<input id="account_id" name="account_id" required pattern="[0-9a-f]{24}" value="${account ?? ''}">
<button type="submit">Filter</button>${account ? html` <a href="${listUrl(frame, {})}">All accounts</a>` : ''}</form>`
  const table =
    rows.length === 0
      ? html`<p>No ${noun} ${account ? 'for this account' : 'yet'}.</p>`
      : html`<table><caption class="muted">${countOf(frame.pagination)}${noun}, newest first${account ? ` (account ${frame.names.get(account) ?? account})` : ''}</caption>
<thead><tr>${head.map((name) => html`<th scope="col">${name}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`
  return html`${filter}${table}${pager(frame)}`
}

const mailUrl = (frame: PageFrame, mail: { accountId: string; id: string }) =>
  `${frame.base}/accounts/${mail.accountId}/emails/${mail.id}`

export function mailListPage(frame: ListFrame, lines: SentMailLine[]): string {
  const rows = lines.map(
    (mail) => html`<tr><td>${time(mail.createdAt)}</td><td>${accountCell(frame, mail.accountId)}</td>
<td>${mail.from}</td><td>${mail.to.join(', ')}</td>
<td><a href="${mailUrl(frame, mail)}">${mail.subject || '(no subject)'}</a>${mail.attachmentCount > 0 ? html` <span class="muted">(${mail.attachmentCount} attached)</span>` : ''}</td>
<td>${mail.status}</td><td>${mail.events.join(', ') || html`<span class="muted">none</span>`}</td><td>${mail.provider}</td></tr>`,
  )
  const head = ['Sent', 'Account', 'From', 'To', 'Subject', 'Status', 'Events', 'Provider']
  return page(frame, 'Sent email', html`<h1>Sent email</h1>${listBody(frame, 'messages', head, rows)}`, {
    signedIn: true,
    channel: 'Email',
  })
}

const details = (entries: [string, unknown][]) =>
  html`<dl>${entries.map(([name, value]) => (value === '' || value === undefined ? '' : html`<dt>${name}</dt><dd>${value}</dd>`))}</dl>`

const sizeText = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`)

export function mailPage(frame: PageFrame, mail: SentMail, accountName: string | undefined): string {
  const url = mailUrl(frame, mail)
  const events =
    mail.events.length === 0
      ? html`<p class="muted">No delivery event yet.</p>`
      : html`<table><thead><tr><th scope="col">Event</th><th scope="col">Recipient</th><th scope="col">At</th><th scope="col">Details</th></tr></thead><tbody>${mail.events.map(
          (event) =>
            html`<tr><td>${event.event}</td><td>${event.email}</td><td>${time(new Date(event.timestamp * 1000))}</td><td>${[event.url, event.useragent, event.ip].filter(Boolean).join(' · ')}</td></tr>`,
        )}</tbody></table>`
  const template = mail.template
    ? html`<h2>Template</h2><p>Sent with the provider's template <code>${mail.template.id}</code>, with this data:</p><pre>${JSON.stringify(mail.template.data ?? {}, null, 2)}</pre>`
    : ''
  const attachments = html`<h2>Attachments</h2>${
    mail.attachments.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul>${mail.attachments.map(
          (file, index) =>
            html`<li><a href="${url}/attachments/${index}" download="${file.file_name}">${file.file_name}</a> <span class="muted">${file.type}, ${sizeText(file.size)}</span></li>`,
        )}</ul>`
  }`
  return page(
    frame,
    mail.subject || '(no subject)',
    html`<p><a href="${frame.base}">All sent email</a></p><h1>${mail.subject || '(no subject)'}</h1>
${details([
  ['From', mail.from],
  ['Reply to', mail.replyTo],
  ['To', mail.to.join(', ')],
  ['Cc', mail.cc.join(', ')],
  ['Bcc', mail.bcc.join(', ')],
  ['Sent', time(mail.createdAt)],
  ['Account', `${accountName ?? 'deleted account'} (${mail.accountId})`],
  ['Status', mail.status],
  ['Provider', mail.provider],
  ['Message id', mail.msgId ?? ''],
])}
<h2>Delivery events</h2>${events}${template}
<h2>HTML part</h2>${
      mail.html === undefined
        ? html`<p class="muted">None.</p>`
        : html`<iframe sandbox src="${url}/html" title="HTML part" referrerpolicy="no-referrer"></iframe>`
    }
<h2>Text part</h2>${mail.text === undefined ? html`<p class="muted">None.</p>` : html`<pre>${mail.text}</pre>`}
${attachments}`,
    { signedIn: true, channel: 'Email' },
  )
}

const smsUrl = (frame: PageFrame, sms: SentSms) => `${frame.base}/accounts/${sms.account_id}/sms/${sms._id}`

const smsStatus = (sms: SentSms) => (sms.provider === 'twilio' ? 'sent to Twilio' : 'kept in the outbox')

const preview = (body: string) => (body.length > 80 ? `${body.slice(0, 79)}…` : body)

export function smsListPage(frame: ListFrame, messages: SentSms[]): string {
  const rows = messages.map(
    (sms) => html`<tr><td>${time(sms.created_at)}</td><td>${accountCell(frame, sms.account_id)}</td>
<td>${sms.from ?? ''}</td><td>${sms.to}</td><td><a href="${smsUrl(frame, sms)}">${preview(sms.body)}</a></td><td>${smsStatus(sms)}</td></tr>`,
  )
  const head = ['Sent', 'Account', 'From', 'To', 'Message', 'Status']
  return page(frame, 'Sent SMS', html`<h1>Sent SMS</h1>${listBody(frame, 'SMS', head, rows)}`, {
    signedIn: true,
    channel: 'SMS',
  })
}

export function smsPage(frame: PageFrame, sms: SentSms, accountName: string | undefined): string {
  return page(
    frame,
    `SMS to ${sms.to}`,
    html`<p><a href="${frame.base}/sms">All sent SMS</a></p><h1>SMS to ${sms.to}</h1>
${details([
  ['From', sms.from ?? ''],
  ['To', sms.to],
  ['Sent', time(sms.created_at)],
  ['Account', `${accountName ?? 'deleted account'} (${sms.account_id})`],
  ['Status', smsStatus(sms)],
  ['Provider id', sms.provider_id ?? ''],
  ['Review request', sms.request_id],
])}
<h2>Message</h2><pre>${sms.body}</pre>`,
    { signedIn: true, channel: 'SMS' },
  )
}
