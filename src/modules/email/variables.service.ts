/**
 * `{{variable}}` replacement of the send endpoint (rule 2 of the spec's send rules), applied to the
 * subject and to every content value. Resolution order, as the spec gives it: (1) the value looked up
 * from the supplied ids and the recipient contact / sending user, (2) `fallback_values`, (3) the
 * placeholder left exactly as written.
 *
 * Decisions the spec leaves open:
 * - A looked-up value that is empty (or only whitespace) counts as not found and falls through to the
 *   fallback: the records store missing optional fields as '', and a user who writes a fallback expects
 *   it to show whenever the record has nothing to say.
 * - A fallback that is an empty string is used as given: writing one is an explicit "print nothing".
 *   A JSON `null` fallback counts as no fallback.
 * - Only the fifteen supported names are replaced; any other `{{name}}` stays as written, even when
 *   `fallback_values` has an entry for it, so templates of other systems pass through untouched.
 * - In `fallback_values`, the full-name form (`{"business.name": ...}`) wins over the nested form
 *   (`{"business": {"name": ...}}`) when both give the same name.
 * - Replacement is a single pass: a substituted value that itself contains `{{...}}` is not expanded
 *   again, so a contact cannot make a message reveal another variable.
 */

import type { Database } from '../../platform/db/connection.js'
import { Invalid } from '../../platform/http/errors.js'
import { escapeHtml } from '../../platform/http/html.js'
import { isJsonObject } from '../../platform/http/json-fields.js'
import type { VariableSourceKind } from '../accounts/contacts.schemas.js'
import { getVariableSource } from '../accounts/contacts.service.js'

/** The records read by id: the request field carrying the id, and the fields exposed as variables. */
const RECORD_VARIABLES = {
  person: { idField: 'person_id', kind: 'persons', fields: ['first_name', 'last_name', 'email'] },
  business: { idField: 'business_id', kind: 'businesses', fields: ['name', 'address', 'phone'] },
  instasite: { idField: 'instasite_id', kind: 'instasites', fields: ['url', 'name'] },
  instareport: { idField: 'instareport_id', kind: 'instareports', fields: ['url', 'link'] },
} as const satisfies Record<
  string,
  { idField: keyof VariableSources; kind: VariableSourceKind; fields: readonly string[] }
>

const CONTACT_FIELDS = ['name', 'email', 'phone'] as const
const USER_FIELDS = ['name', 'email'] as const

const prefixed = (prefix: string, fields: readonly string[]) => fields.map((field) => `${prefix}.${field}`)

/** The fifteen supported names, in the spec's order. */
export const SUPPORTED_VARIABLES: readonly string[] = Object.freeze([
  ...prefixed('contact', CONTACT_FIELDS),
  ...Object.entries(RECORD_VARIABLES).flatMap(([prefix, record]) => prefixed(prefix, record.fields)),
  ...prefixed('user', USER_FIELDS),
])

const SUPPORTED = new Set(SUPPORTED_VARIABLES)

export interface VariableSources {
  person_id?: string
  business_id?: string
  instasite_id?: string
  instareport_id?: string
  /** The recipient contact (found by recipient_id or email), when there is one. */
  contact?: { name: string; email: string | null; phone: string } | null
  /** The sending user. */
  user?: { name: string; email: string } | null
}

/** Whether a looked-up value says something; see the top comment for why '' does not. */
const isPresent = (value: unknown): value is string => typeof value === 'string' && value.trim() !== ''

/** Copies the present values of `fields` from `record` into `found` as `prefix.field`. */
function collect(
  found: Map<string, string>,
  prefix: string,
  fields: readonly string[],
  record: Record<string, unknown> | null | undefined,
): void {
  if (!record) return
  for (const field of fields) {
    const value = record[field]
    if (isPresent(value)) found.set(`${prefix}.${field}`, value)
  }
}

/**
 * Values found for the supported names from the given ids, read through the accounts module and
 * scoped to `accountId`: an id of another account, an unknown or a malformed id finds nothing and is
 * not an error (the fallback or the placeholder then shows). Empty values are left out.
 */
export async function lookUpVariables(
  db: Database,
  accountId: string,
  sources: VariableSources,
): Promise<Map<string, string>> {
  const records = await Promise.all(
    Object.entries(RECORD_VARIABLES).map(async ([prefix, record]) => {
      const id = sources[record.idField]
      const view = id ? await getVariableSource(db, accountId, record.kind, id) : null
      return { prefix, fields: record.fields, view }
    }),
  )
  const found = new Map<string, string>()
  collect(found, 'contact', CONTACT_FIELDS, sources.contact)
  for (const { prefix, fields, view } of records) collect(found, prefix, fields, view)
  collect(found, 'user', USER_FIELDS, sources.user)
  return found
}

/** Adds the leaves under `value` as dotted names; null leaves are no fallback. */
function flatten(name: string, value: unknown, into: Map<string, string>): void {
  if (value === null || value === undefined) return
  if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) flatten(`${name}.${key}`, child, into)
    return
  }
  into.set(name, typeof value === 'string' ? value : JSON.stringify(value))
}

function parseJsonObject(raw: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = undefined
  }
  if (!isJsonObject(parsed)) throw new Invalid('fallback_values must be a JSON object')
  return parsed
}

/**
 * `fallback_values` as sent: a string holding a JSON object, keyed by the full name or nested, both
 * accepted (the full name wins when both give one). Non-string leaves are stringified as JSON.
 */
export function parseFallbackValues(raw: string | undefined): Map<string, string> {
  const fallbacks = new Map<string, string>()
  if (raw === undefined || raw.trim() === '') return fallbacks
  const entries = Object.entries(parseJsonObject(raw))
  // Nested entries first, so that full-name entries set afterwards take precedence.
  for (const [key, value] of entries) if (isJsonObject(value)) flatten(key, value, fallbacks)
  for (const [key, value] of entries) if (!isJsonObject(value)) flatten(key, value, fallbacks)
  return fallbacks
}

/** `{{ name }}`: a name without braces or whitespace, with any whitespace around it inside the braces. */
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g

/** The value a supported name resolves to, in the spec's order; undefined leaves the placeholder. */
function resolve(name: string, found: Map<string, string>, fallbacks: Map<string, string>) {
  if (!SUPPORTED.has(name)) return undefined
  const looked = found.get(name)
  return isPresent(looked) ? looked : fallbacks.get(name)
}

/** Replaces each `{{ name }}` that `lookUp` resolves; the others stay exactly as written. */
function substitute(template: string, lookUp: (name: string) => string | undefined, html: boolean): string {
  return template.replace(PLACEHOLDER, (placeholder, name: string) => {
    const value = lookUp(name)
    if (value === undefined) return placeholder
    return html ? escapeHtml(value) : value
  })
}

/**
 * Replaces each `{{ name }}` of `template` in one pass: looked-up value, else fallback, else the
 * placeholder exactly as written. In html mode substituted values are HTML-escaped; the template is not.
 */
export function renderVariables(
  template: string,
  found: Map<string, string>,
  fallbacks: Map<string, string>,
  options: { html: boolean },
): string {
  return substitute(template, (name) => resolve(name, found, fallbacks), options.html)
}

/**
 * Replaces the `{{ name }}` placeholders of `values`' names only (another module's own variables, such as
 * `{{review.link}}`), leaving every other placeholder for `renderVariables`.
 */
export function renderNamedValues(
  template: string,
  values: Record<string, string>,
  options: { html: boolean },
) {
  return substitute(
    template,
    (name) => (Object.hasOwn(values, name) ? values[name] : undefined),
    options.html,
  )
}
