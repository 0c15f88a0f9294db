// What the shard-ready schema test (shard-ready-schema.test.ts) lets through, each with why. Be strict: an
// entry is for what needs a lookup across accounts by nature (the account is not known when the key is read,
// or the key is one across the platform); everything else is keyed by account. docs/decisions.md, "A schema
// that shards by account", has the path to a distributed PostgreSQL these lead to.

/**
 * Tables without `account_id`: global, reference tables (or the coordinator's own) on a distributed
 * PostgreSQL. None of them may reference an account-owned table.
 */
export const GLOBAL_TABLES: Record<string, string> = {
  accounts: 'the tenants themselves: every account-owned row references one; read before any account row',
  users: 'a person signs in once (by email) and may be a member of several accounts',
  oauth_apps: 'third-party apps registered once for the platform; each serves many accounts',
  oauth_scopes: "the platform's scope catalog, seeded by migrations",
  outbox_sessions: "the operator's sessions on the outbox page, which reads across accounts",
  account_removals:
    "the operator's record of a removal: it outlives the account's rows, and is read by any id of the family",
  lead_webhook_events:
    "Meta's raw lead posts as received, before their page and form tell whose leads they are (one post can hold several pages' changes)",
  mail_event_batches:
    "SendGrid's raw event posts as received: one batch mixes accounts, split by account when processed",
}

/**
 * Tables whose `account_id` may be null: rows that arrive before the account they belong to is known, and
 * are attributed later (or never). A primary key cannot hold a nullable column, so theirs is `id`; their
 * unique keys and references are held to the rules (their global keys are in GLOBAL_UNIQUE_KEYS).
 */
export const ATTRIBUTED_LATER_TABLES: Record<string, string> = {
  leads:
    "a Meta lead is stored as it arrives, keyed by Meta's leadgen id; an unclaimed one (no live campaign for its page and form) belongs to no account until a campaign picks it up",
  review_webhook_events:
    "a Stripe or Square event is stored before it is acknowledged, keyed by the provider's event id; its account is found when it is processed (a payment's metadata, a claimed location), or never",
  oauth_audit_events:
    'what happened at the authorization server, some of it before any account: a client that failed to authenticate, a code refused',
}

/**
 * Unique indexes of account-owned tables without `account_id`: keys read before the account is known, or
 * that one account holds across the platform. On a distributed PostgreSQL each is kept by a lookup table of
 * its own (a reference table, or a table distributed by that key) that gives the account.
 */
export const GLOBAL_UNIQUE_KEYS: Record<string, string> = {
  funnel_short_links_code:
    "a public short link (/s/:code) is opened by anyone, with nothing but the code: the code names the account's link",
  review_requests_code:
    "a review request's tracked link (/r/:code) is opened by the customer, with nothing but the code",
  oauth_codes_hash:
    'an authorization code is redeemed at the token endpoint by its value alone; the code tells the account',
  oauth_refresh_tokens_hash:
    'a refresh token is presented at the token endpoint (and revoked) by its value alone; the token tells the account',
  funnel_domains_name_unique:
    'a custom domain is served to one account across the platform: the edge and the page routes find the account by the Host',
  lead_campaigns_page_form_live:
    "Meta's lead webhook names a page and a form, not an account: one live campaign across accounts claims them",
  leads_leadgen_id:
    "Meta's id of a lead, unique across Meta: a redelivered or synced lead is captured once, claimed or not",
  review_webhook_events_source_event:
    "a provider's event id (Stripe's, Square's): a redelivered event is recognised before its account is known",
  review_order_locations_location:
    "Square's order webhook names a location, not an account: the location belongs to one account across the platform",
  memberships_one_main_per_user:
    "a user's main account is one across all their accounts: read at sign-in, before an account is chosen",
}

/**
 * Unique indexes kept one release for the code of the release before (expand and contract): each has its
 * account-led successor already, and goes in the next release's migration. None now: 0043 dropped the last
 * three that 0037-0039 kept.
 */
export const CONTRACT_IN_NEXT_RELEASE: Record<string, string> = {}
