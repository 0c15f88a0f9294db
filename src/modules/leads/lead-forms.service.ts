import type { Database } from '../../platform/db/connection.js'
import { errorBody } from '../../platform/http/envelope.js'
import { Invalid, NotFound, UpstreamFailed } from '../../platform/http/errors.js'
import { textOf } from '../../platform/http/json-fields.js'
import type { Logger } from '../../platform/log/logger.js'
import { ProviderUnreachable } from '../../platform/providers/http-client.js'
import { isSubAccountOf } from '../accounts/accounts.service.js'
import { GraphError, type GraphLeadForm, type GraphSettings, listLeadForms } from './graph.js'
import type { LeadForm, LeadFormsQuery, LeadFormsRefusal } from './lead-forms.schemas.js'

export interface LeadFormsDeps {
  db: Database
  log: Logger
  graph: GraphSettings
}

/** `account_id` names neither the caller's account nor one of its sub-accounts. */
export const ACCOUNT_NOT_FOUND = 'Account not found'

/**
 * Graph refused the listing (the spec's "Invalid page token": `OAuthException`, code 190): 400 with Graph's
 * message, its provider error object `{ message, type, code }` in `additional_info`.
 */
export class LeadFormsRefused extends Invalid {
  constructor(readonly providerError: GraphError['providerError']) {
    super(providerError.message, providerError)
  }
}

/**
 * The answer to Graph's refusal, for both readings of the spec (docs/decisions.md): the shared error
 * envelope, and the provider error object's fields beside the envelope's as well as in `additional_info`.
 */
export function refusalBody(refused: LeadFormsRefused): LeadFormsRefusal {
  const { type, code } = refused.providerError
  return { type, code, ...errorBody(refused.statusCode, refused.message, refused.providerError) }
}

/** Graph's `2024-01-15T10:20:30+0000` as ISO 8601; what does not parse is kept as Graph wrote it. */
function isoTime(graphTime: string | undefined): string | null {
  if (!graphTime) return null
  const at = new Date(graphTime)
  return Number.isNaN(at.getTime()) ? graphTime : at.toISOString()
}

const formView = (form: GraphLeadForm, pageId: string): LeadForm => ({
  id: form.id,
  name: textOf(form.name) ?? null,
  status: textOf(form.status) ?? null,
  locale: textOf(form.locale) ?? null,
  questions: (Array.isArray(form.questions) ? form.questions : []).map((question) => ({
    key: textOf(question?.key) ?? null,
    label: textOf(question?.label) ?? null,
    type: textOf(question?.type) ?? null,
  })),
  privacy_policy: form.privacy_policy
    ? {
        url: textOf(form.privacy_policy.url) ?? null,
        link_text: textOf(form.privacy_policy.link_text) ?? null,
      }
    : null,
  created_time: isoTime(textOf(form.created_time)),
  page_id: pageId,
})

/** The account the caller names must be its own or a sub-account of it; another's is not found (404). */
async function assertReachableAccount(db: Database, callerAccountId: string, accountId: string | undefined) {
  if (accountId === undefined || accountId === callerAccountId) return
  if (!(await isSubAccountOf(db, accountId, callerAccountId))) throw new NotFound(ACCOUNT_NOT_FOUND)
}

/**
 * `GET /socialnet/accounts/:pageid/leadforms`: the page's lead forms read from Graph with the page token
 * the caller gives, every page of Graph's cursor. Graph's refusal is LeadFormsRefused.
 */
export async function listPageLeadForms(
  deps: LeadFormsDeps,
  callerAccountId: string,
  pageId: string,
  query: LeadFormsQuery,
): Promise<LeadForm[]> {
  await assertReachableAccount(deps.db, callerAccountId, query.account_id)
  try {
    const forms = await listLeadForms(deps.graph, pageId, query.pageaccesstoken, deps.log)
    return forms.map((form) => formView(form, pageId))
  } catch (error) {
    if (error instanceof GraphError) throw new LeadFormsRefused(error.providerError)
    // Not the caller's fault, and worth retrying: 502, as the service answers for other providers.
    if (error instanceof ProviderUnreachable) throw new UpstreamFailed('Graph API unreachable')
    throw error
  }
}
