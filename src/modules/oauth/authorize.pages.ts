import { posix } from 'node:path'
import { escapeHtml } from '../../platform/http/html.js'
import { type Locale, type PageTextKey, pageText } from './authorize.texts.js'

/** Server-rendered pages of the authorization flow: plain, accessible HTML, no script, no outside asset. */

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 12px;
    box-shadow: 0 1px 3px rgb(0 0 0 / 12%); }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem;
    border: 1px solid #9aa1ad; border-radius: 6px; font: inherit; }
  button { margin-top: 1.5rem; padding: .6rem 1.2rem; border: 0; border-radius: 6px; font: inherit;
    background: #2453d4; color: #fff; cursor: pointer; }
  button.secondary { background: #e3e6eb; color: #1d2330; margin-left: .5rem; }
  button:focus-visible, input:focus-visible { outline: 3px solid #f5b400; outline-offset: 2px; }
  .error { background: #fdecec; color: #8a1c1c; padding: .75rem; border-radius: 6px; }
  ul { padding-left: 1.2rem; } li { margin: .4rem 0; } .muted { color: #5b6473; font-size: .9rem; }
  fieldset { border: 0; padding: 0; margin: 1rem 0 0; } fieldset label { font-weight: 400; margin: .5rem 0; }`

function page(locale: Locale, title: string, body: string): string {
  return `<!doctype html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body>
</html>`
}

/** What every page of a flow is rendered with: its language, the app, and what its forms post back. */
export interface PageFrame {
  locale: Locale
  /** The app asking: the spec's `client_name`. */
  clientName: string
  /** The signed flow token (the spec's state `token`). */
  token: string
  /** The path the page was served at: its forms post relative to it. */
  pagePath: string
}

const t = (frame: { locale: Locale }, key: PageTextKey, values?: Record<string, string>) =>
  escapeHtml(pageText(frame.locale, key, values))

/**
 * Where a form posts, relative to the page's path: back to the host the browser loaded the page from, the
 * one its CSRF cookie is sent to, whatever PUBLIC_BASE_URL names (and under any path prefix a proxy adds).
 */
export function formAction(pagePath: string, target: string): string {
  const relative = posix.relative(posix.dirname(pagePath), target)
  return relative === '' ? `../${posix.basename(target)}` : relative
}

const form = (frame: PageFrame, path: string, fields: string) =>
  `<form method="post" action="${escapeHtml(formAction(frame.pagePath, `/v1/auth/oauth/authorize${path}`))}">
<input type="hidden" name="token" value="${escapeHtml(frame.token)}">${fields}</form>`

const errorBox = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''

/** The sign-in form; after a refusal it shows why and keeps the email typed. */
export function signInPage(frame: PageFrame, refused?: { error: string; email: string }): string {
  return page(
    frame.locale,
    pageText(frame.locale, 'signInTitle'),
    `<h1>${t(frame, 'signInTitle')}</h1><p>${t(frame, 'signInLead', { app: frame.clientName })}</p>${errorBox(refused?.error)}
${form(
  frame,
  '',
  `<label for="email">${t(frame, 'email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required${
    refused ? ` value="${escapeHtml(refused.email)}"` : ' autofocus'
  }>
<label for="password">${t(frame, 'password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${refused ? ' autofocus' : ''}>
<button type="submit">${t(frame, 'signIn')}</button>`,
)}`,
  )
}

export function accountsPage(
  frame: PageFrame,
  accounts: { _id: string; name: string; main: boolean }[],
): string {
  const choices = accounts
    .map(
      (account, i) =>
        `<label><input type="radio" name="account_id" value="${escapeHtml(account._id)}"${
          i === 0 ? ' checked' : ''
        } required> ${escapeHtml(account.name)}${account.main ? ` <span class="muted">(${t(frame, 'main')})</span>` : ''}</label>`,
    )
    .join('\n')
  return page(
    frame.locale,
    pageText(frame.locale, 'chooseTitle'),
    `<h1>${t(frame, 'chooseTitle')}</h1>
${form(
  frame,
  '/account',
  `<fieldset><legend>${t(frame, 'chooseLead', { app: frame.clientName })}</legend>
${choices}</fieldset><button type="submit">${t(frame, 'continue')}</button>`,
)}`,
  )
}

export function consentPage(
  frame: PageFrame,
  consent: { accountName: string; redirectUri: string; scopes: { scope: string; description: string }[] },
): string {
  const scopes = consent.scopes
    .map((s) => `<li>${escapeHtml(s.description)} <span class="muted">(${escapeHtml(s.scope)})</span></li>`)
    .join('\n')
  return page(
    frame.locale,
    pageText(frame.locale, 'consentTitle'),
    `<h1>${t(frame, 'consentTitle')}</h1>
<p>${t(frame, 'consentLead', { app: frame.clientName })}</p><ul>${scopes}</ul>
<p>${t(frame, 'consentAccount', { account: consent.accountName })}</p>
<p class="muted">${t(frame, 'consentRedirect', { uri: consent.redirectUri })}</p>
${form(
  frame,
  '/consent',
  `<button type="submit" name="decision" value="allow">${t(frame, 'allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t(frame, 'deny')}</button>`,
)}`,
  )
}

/** A request that cannot go back to the app (unknown client, unregistered redirect URI, stale page). */
export function errorPage(locale: Locale, error: string, description: string): string {
  return page(
    locale,
    pageText(locale, 'errorTitle'),
    `<h1>${t({ locale }, 'errorTitle')}</h1><p class="error" role="alert">${escapeHtml(description)}</p>
<p class="muted">${escapeHtml(error)}</p>`,
  )
}
