import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { hash } from '@node-rs/argon2'
import pg from 'pg'
import { migrateDatabase, openDatabase } from '../src/platform/db/connection.js'

/**
 * `npm run seed:volume -- --scale N [--reset]`: fills the PostgreSQL database of DATABASE_URL with a
 * platform's worth of data, written with set-based SQL (`insert … select … from generate_series`), not the
 * API. Every row is a pure function of its table, its number and the scale (ids are md5 of both, times are
 * taken back from a fixed instant), so the same scale gives the same data. Accounts are skewed: the largest
 * agency and its sub-accounts hold about 40 % of every account-owned table, the largest account about 11 %.
 */

export interface SeedOptions {
  /** 1: the large scale (about 18 million rows); 0.01: a small one. */
  scale: number
  /** Empty the service's tables first; without it a database holding data is refused. */
  reset?: boolean
  /** Told each table as it is written, with its rows and time. */
  log?: (line: string) => void
}

export interface SeedResult {
  /** Rows written per table. */
  rows: Record<string, number>
  seconds: number
}

/** Users can sign in with this password (every seeded user has it). */
export const SEED_PASSWORD = 'seed-volume-password'
/** Users per account: the first is the main member, in every room of the account. */
export const USERS_PER_ACCOUNT = 5
export const MESSAGES_PER_ROOM = 100
const STEPS_PER_FUNNEL = 3
// A prime: funnel n's short code is n times it modulo 62^6 in base 62, one distinct code per funnel that
// does not read as a counter.
const SHORT_CODE_STRIDE = 1_000_003
/** Every seeded time is within the year before this instant. */
export const LATEST = '2026-11-01T00:00:00Z'

/**
 * A server reading a seeded database keeps its rows: the seeded times lie in the year before LATEST, so the
 * default retention periods would delete its older clicks, codes, tokens and events within minutes.
 */
export const RETENTION_OFF_FOR_SEEDED_ROWS = {
  MAIL_EVENT_BATCHES_RETENTION: 'off',
  REVIEW_WEBHOOK_EVENTS_RETENTION: 'off',
  LEAD_WEBHOOK_EVENTS_RETENTION: 'off',
  OAUTH_AUDIT_EVENTS_RETENTION: 'off',
  OAUTH_CODES_RETENTION: 'off',
  OAUTH_REFRESH_TOKENS_RETENTION: 'off',
  SHORT_LINK_CLICKS_RETENTION: 'off',
}
const YEAR_SECONDS = 365 * 86_400
/** The share of every account-owned table held by the largest agency and its sub-accounts. */
const LARGEST_AGENCY_SHARE = 0.4
/** Accounts 0 to 4 % of them form the largest agency; the others come in agencies of ten. */
const LARGEST_AGENCY_ACCOUNTS = 0.04
const AGENCY_SIZE = 10
// Tables the migrations fill themselves: their rows are not data.
const MIGRATION_TABLES = ['oauth_scopes']

/** Row counts at --scale 1; each is multiplied by the scale (with a floor for the few that must exist). */
function countsAt(scale: number) {
  const of = (large: number, least = 1) => Math.max(least, Math.round(large * scale))
  const accounts = of(2_000, 10)
  return {
    accounts,
    contacts: of(1_000_000),
    communications: of(3_000_000),
    // One direct room per account; the rest are group rooms.
    groupRooms: of(20_000 - 2_000, accounts),
    funnels: of(20_000, accounts),
    formSubmissions: of(500_000),
    clicks: of(2_000_000),
    reviewEvents: of(500_000),
    leads: of(500_000),
    apps: of(50, 2),
    refreshTokens: of(200_000),
    auditEvents: of(1_000_000),
    doNotDisturb: of(100_000),
  }
}
type Counts = ReturnType<typeof countsAt>

/**
 * Functions of the session (pg_temp, gone when it ends) that every family's SQL is written with:
 * seed_hash(tag, n): 60 bits of an md5, seed_at(tag, n): a time in the year before LATEST, seed_id(tag, n): an id in the
 * service's format (ids.ts: 8 hex digits of Unix seconds, then 16 more) whose time is seed_at's,
 * seed_account(n, total): the account of row n of total (skewed), account_id / user_id / chat_id of an
 * account's number (and its user's), and seed_agency(a): the agency account a is under.
 */
function sessionFunctions(accounts: number): string {
  const largest = Math.max(1, Math.round(accounts * LARGEST_AGENCY_ACCOUNTS))
  // Row fraction f goes to account floor(A · f^p): accounts below `largest` get LARGEST_AGENCY_SHARE of rows.
  const exponent = Math.log(largest / accounts) / Math.log(LARGEST_AGENCY_SHARE)
  // Stable, as their bodies are (time-zone arithmetic), so that PostgreSQL inlines them: a function declared
  // immutable over a stable body is called row by row, which made a million timestamps take 2 s instead of 0.3.
  const fn = (signature: string, result: string, body: string) =>
    `create function pg_temp.${signature} returns ${result} language sql stable parallel safe as $$ ${body} $$;`
  return [
    fn(
      'seed_hash(tag text, n bigint)',
      'bigint',
      `select ('x' || substr(md5(tag || ':' || n), 1, 15))::bit(60)::bigint`,
    ),
    fn(
      'seed_at(tag text, n bigint)',
      'timestamptz',
      `select timestamptz '${LATEST}' - make_interval(secs => pg_temp.seed_hash(tag, n) % ${YEAR_SECONDS})`,
    ),
    fn(
      'seed_id_at(tag text, n bigint, at timestamptz)',
      'text',
      `select lpad(to_hex(extract(epoch from at)::bigint), 8, '0') || substr(md5(tag || '#' || n), 1, 16)`,
    ),
    fn('seed_id(tag text, n bigint)', 'text', `select pg_temp.seed_id_at(tag, n, pg_temp.seed_at(tag, n))`),
    fn(
      'seed_account(n bigint, total bigint)',
      'int',
      `select least(${accounts - 1}, floor(${accounts} * power((n - 0.5::float8) / total, ${exponent})))::int`,
    ),
    fn('account_id(a int)', 'text', `select pg_temp.seed_id('account', a)`),
    fn('user_id(a int, k int)', 'text', `select pg_temp.seed_id('user', a * ${USERS_PER_ACCOUNT} + k)`),
    fn('chat_id(a int, k int)', 'text', `select pg_temp.seed_id('chat', a * ${USERS_PER_ACCOUNT} + k)`),
    fn(
      'seed_agency(a int)',
      'int',
      `select case when a < ${largest} then 0 else ${largest} + (a - ${largest}) / ${AGENCY_SIZE} * ${AGENCY_SIZE} end`,
    ),
    // Words of a message or a name: the hash's hex digits as letters, four of the sixteen as spaces (words
    // of about three letters, the short ones the most frequent).
    fn(
      'seed_words(tag text, n bigint, count int)',
      'text',
      `select trim(translate(substr(md5(tag || '~' || n), 1, count * 4), '0123456789abcdef', 'bc df gh kl mnps'))`,
    ),
    // A review request's tracked-link code, as scheduling.service.ts makes them: 9 bytes in base64url.
    fn(
      'seed_code(tag text, n bigint)',
      'text',
      `select translate(encode(substr(decode(md5(tag || '/' || n), 'hex'), 1, 9), 'base64'), '+/', '-_')`,
    ),
    // A short link's code: n in base 62, six characters (unique below 62^6).
    fn(
      'seed_short_code(n bigint)',
      'text',
      `select string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', (n / (62::bigint ^ i)::bigint % 62)::int + 1, 1), '' order by i desc) from generate_series(0, 5) i`,
    ),
  ].join('\n')
}

type Run = (table: string, statement: string, values?: unknown[]) => Promise<void>

/** The range of contact numbers each account holds (what leads and forms point at): account, first, count. */
const contactRanges = (counts: Counts) => `(select pg_temp.seed_account(n, ${counts.contacts}) as account,
    min(n) as first, count(*) as count
  from generate_series(1, ${counts.contacts}::bigint) n group by 1)`

async function accountsAndUsers(run: Run, counts: Counts, passwordHash: string): Promise<void> {
  const users = `select a, k, a * ${USERS_PER_ACCOUNT} + k as u, pg_temp.seed_at('user', a * ${USERS_PER_ACCOUNT} + k) as at
    from generate_series(0, ${counts.accounts - 1}) a, generate_series(0, ${USERS_PER_ACCOUNT - 1}) k`
  await run(
    'accounts',
    `insert into accounts (id, name, parent_account, status, tier, created_at, updated_at)
     select pg_temp.account_id(a), case when agency = a then 'Agency ' else 'Account ' end || a,
       case when agency = a then null else pg_temp.account_id(agency) end,
       'active', case when a % 7 = 0 then 'pro' else 'basic' end, at, at
     from (select a, pg_temp.seed_agency(a) as agency, pg_temp.seed_at('account', a) as at
           from generate_series(0, ${counts.accounts - 1}) a) s`,
  )
  await run(
    'users',
    `insert into users (id, email, name, first_name, last_name, password_hash, created_at, updated_at)
     select pg_temp.user_id(a, k), 'user-' || u || '@seed.example.com', 'Member ' || u, 'Member', u::text, $1, at, at
     from (${users}) s`,
    [passwordHash],
  )
  await run(
    'memberships',
    `insert into memberships (account_id, user_id, main, created_at)
     select pg_temp.account_id(a), pg_temp.user_id(a, k), true, at from (${users}) s`,
  )
  await run(
    'chat_identities',
    `insert into chat_identities (id, account_id, user_id, created_at)
     select pg_temp.chat_id(a, k), pg_temp.account_id(a), pg_temp.user_id(a, k), at from (${users}) s`,
  )
}

async function contacts(run: Run, counts: Counts): Promise<void> {
  await run(
    'contacts',
    `insert into contacts (id, account_id, email, name, phone, created_at, updated_at)
     select pg_temp.seed_id('contact', n), pg_temp.account_id(pg_temp.seed_account(n, $1)),
       'contact-' || n || '@example.com', initcap(pg_temp.seed_words('name', n, 2)), '+1555' || lpad(n::text, 7, '0'),
       pg_temp.seed_at('contact', n), pg_temp.seed_at('contact', n)
     from generate_series(1, $1::bigint) n`,
    [counts.contacts],
  )
}

/** Communications (one in ten a reply), and each sent one's delivery events: processed, delivered, a quarter opened. */
async function communications(run: Run, counts: Counts): Promise<void> {
  await run(
    'communications',
    `insert into communications (id, account_id, type, module, message_type, origin, sent_by, headers, body,
       msg_id, contact_ids, attachments, success, from_address, to_addresses, subject, text, html,
       created_at, modified_at)
     select pg_temp.seed_id('communication', j), pg_temp.account_id(a), case when incoming then 'INCOMING' else 'OUTGOING' end,
       'SENDGRID', 'EMAIL', '',
       case when incoming then null else jsonb_build_object('name', 'Member ' || u, 'email', 'user-' || u || '@seed.example.com',
         'first_name', 'Member', 'last_name', u::text, 'phone', '', 'image', '') end,
       '{}'::jsonb,
       case when incoming then '{}'::jsonb else jsonb_build_object(
         'personalizations', jsonb_build_array(jsonb_build_object('to', jsonb_build_array(jsonb_build_object('email', email)))),
         'from', jsonb_build_object('email', 'user-' || u || '@seed.example.com', 'name', 'Member ' || u),
         'subject', subject, 'content', jsonb_build_array(jsonb_build_object('type', 'text/plain', 'value', body))) end,
       substr(md5('msg' || j), 1, 22), array[pg_temp.seed_id('contact', k)], '[]'::jsonb, true,
       case when incoming then email end, case when incoming then array['user-' || u || '@seed.example.com'] end,
       case when incoming then 'Re: ' || subject end, case when incoming then body end, null, at, at
     from (select j, k, a, a * ${USERS_PER_ACCOUNT} as u, j % 10 = 0 as incoming, pg_temp.seed_at('communication', j) as at,
             'contact-' || k || '@example.com' as email, initcap(pg_temp.seed_words('subject', j, 3)) as subject,
             pg_temp.seed_words('body', j, 8) as body
           from (select j, k, pg_temp.seed_account(k, $2) as a
                 from (select j, (j - 1) * $2 / $1 + 1 as k from generate_series(1, $1::bigint) j) s) t) c`,
    [counts.communications, counts.contacts],
  )
  await run(
    'communication_events',
    `insert into communication_events (account_id, communication_id, sg_event_id, event, email, timestamp,
       sg_message_id, created_at)
     select c.account_id, c.id, substr(md5(c.id || e.event), 1, 22), e.event, c.body #>> '{personalizations,0,to,0,email}',
       extract(epoch from c.created_at)::bigint + e.after, c.msg_id, c.created_at + make_interval(secs => e.after)
     from communications c
     cross join (values ('processed', 1), ('delivered', 5), ('open', 3600)) as e(event, after)
     where c.type = 'OUTGOING' and (e.event <> 'open' or hashtext(c.id) % 4 = 0)`,
  )
}

/**
 * Rooms: one direct room per account (its first two users), and group rooms of three members shared out
 * skewed. Every room holds MESSAGES_PER_ROOM messages, 17 minutes apart up to its last activity.
 */
async function rooms(run: Run, counts: Counts, db: pg.ClientBase): Promise<void> {
  await db.query(
    `create temp table seed_rooms as
     select pg_temp.seed_id('direct-room', a) as id, a, 'direct' as type, array[0, 1] as members,
       pg_temp.seed_at('direct-room', a) as last_at
     from generate_series(0, ${counts.accounts - 1}) a
     union all
     select pg_temp.seed_id('room', r), pg_temp.seed_account(r, $1), 'group',
       array[0, 1 + r % 4, 1 + (r + 1) % 4]::int[], pg_temp.seed_at('room', r)
     from generate_series(1, $1::bigint) r`,
    [counts.groupRooms],
  )
  await db.query(
    `create function pg_temp.message_at(last_at timestamptz, seq int) returns timestamptz language sql stable as
       $$ select last_at - (${MESSAGES_PER_ROOM} - seq) * interval '17 minutes' $$;
     create function pg_temp.message_id(room text, last_at timestamptz, seq int) returns text language sql stable as
       $$ select pg_temp.seed_id_at('message:' || room, seq, pg_temp.message_at(last_at, seq)) $$;`,
  )
  const created = `pg_temp.message_at(last_at, 0) - interval '1 day'`
  await run(
    'rooms',
    `insert into rooms (id, account_id, type, name, owner_id, direct_pair, last_seq, last_message_id, last_activity,
       created_at, updated_at)
     select id, pg_temp.account_id(a), type, case when type = 'group' then initcap(pg_temp.seed_words('room', hashtext(id), 2)) end,
       pg_temp.chat_id(a, 0),
       case when type = 'direct' then least(pg_temp.chat_id(a, 0), pg_temp.chat_id(a, 1)) || ':' || greatest(pg_temp.chat_id(a, 0), pg_temp.chat_id(a, 1)) end,
       ${MESSAGES_PER_ROOM}, pg_temp.message_id(id, last_at, ${MESSAGES_PER_ROOM}), last_at, ${created}, last_at
     from seed_rooms`,
  )
  // The main member has read up to somewhere in the last 20 messages; the others, everything.
  await run(
    'room_members',
    `insert into room_members (account_id, room_id, conversation_id, role, joined_at, read_seq, read_message_id, read_at,
       last_activity)
     select pg_temp.account_id(a), id, pg_temp.chat_id(a, k), case when k = 0 then 'owner' else 'member' end, ${created},
       read_seq, pg_temp.message_id(id, last_at, read_seq), pg_temp.message_at(last_at, read_seq), last_at
     from (select r.*, k, ${MESSAGES_PER_ROOM} - case when k = 0 then abs(hashtext(id)) % 20 else 0 end as read_seq
           from seed_rooms r, unnest(members) k) m`,
  )
  await run(
    'room_member_history',
    `insert into room_member_history (id, account_id, room_id, conversation_id, joined_at)
     select pg_temp.seed_id_at('stay:' || id, k, ${created}), pg_temp.account_id(a), id, pg_temp.chat_id(a, k), ${created}
     from seed_rooms, unnest(members) k`,
  )
  await run(
    'room_messages',
    `insert into room_messages (id, account_id, room_id, seq, kind, sender_id, content, created_at)
     select pg_temp.message_id(id, last_at, seq), pg_temp.account_id(a), id, seq, 'user',
       pg_temp.chat_id(a, members[1 + seq % cardinality(members)]), pg_temp.seed_words(id, seq, 8),
       pg_temp.message_at(last_at, seq)
     from seed_rooms, generate_series(1, ${MESSAGES_PER_ROOM}) seq`,
  )
}

/**
 * Funnels with their steps and a short link each, the forms their pages received, and their links' clicks
 * with their daily roll-up.
 */
async function funnels(run: Run, counts: Counts): Promise<void> {
  const funnel = (n: string) => `pg_temp.seed_id('funnel', ${n})`
  await run(
    'funnels',
    `insert into funnels (id, account_id, name, base_path, status, created_at, updated_at)
     select ${funnel('f')}, pg_temp.account_id(pg_temp.seed_account(f, $1)), initcap(pg_temp.seed_words('funnel', f, 2)),
       '/funnel-' || f, case when f % 7 = 0 then 'draft' when f % 5 = 0 then 'inactive' else 'active' end,
       pg_temp.seed_at('funnel', f), pg_temp.seed_at('funnel', f)
     from generate_series(1, $1::bigint) f`,
    [counts.funnels],
  )
  await run(
    'funnel_steps',
    `insert into funnel_steps (id, account_id, funnel_id, name, path, type, "order", html, created_at, updated_at)
     select pg_temp.seed_id_at('step', f * ${STEPS_PER_FUNNEL} + i, at), pg_temp.account_id(pg_temp.seed_account(f, $1)),
       ${funnel('f')}, (array['Opt-in', 'Offer', 'Thank you'])[i + 1], (array['/optin', '/offer', '/thank-you'])[i + 1],
       'page', i, '<h1>' || initcap(pg_temp.seed_words('funnel', f, 2)) || '</h1><form id="form-1"></form>', at, at
     from (select f, pg_temp.seed_at('funnel', f) as at from generate_series(1, $1::bigint) f) s,
       generate_series(0, ${STEPS_PER_FUNNEL - 1}) i`,
    [counts.funnels],
  )
  await run(
    'funnel_short_links',
    `insert into funnel_short_links (id, account_id, funnel_id, code, created_at)
     select pg_temp.seed_id('short-link', f), pg_temp.account_id(pg_temp.seed_account(f, $1)), ${funnel('f')},
       pg_temp.seed_short_code(f * ${SHORT_CODE_STRIDE} % ${62 ** 6}), pg_temp.seed_at('funnel', f)
     from generate_series(1, $1::bigint) f`,
    [counts.funnels],
  )
  // The form of a funnel's first step; the account's contact it filled in (none in an account without contacts).
  await run(
    'funnel_form_submissions',
    `insert into funnel_form_submissions (id, account_id, funnel_id, step_id, form_id, fields, visitor_id, ip_address,
       user_agent, contact_id, submitted_at)
     select pg_temp.seed_id('form-submission', s), pg_temp.account_id(a), ${funnel('f')},
       pg_temp.seed_id_at('step', f * ${STEPS_PER_FUNNEL}, pg_temp.seed_at('funnel', f)), 'form-1',
       jsonb_build_object('name', 'Contact ' || coalesce(c, -s), 'email', 'contact-' || coalesce(c, -s) || '@example.com',
         'message', pg_temp.seed_words('form', s, 6)),
       md5('visitor' || s), '198.51.100.' || s % 250, 'Mozilla/5.0 (seed)',
       pg_temp.seed_id('contact', c), pg_temp.seed_at('form-submission', s)
     from (select s, f, a, r.first + s % r.count as c
           from (select s, f, pg_temp.seed_account(f, $2) as a
                 from (select s, (s - 1) * $2 / $1 + 1 as f from generate_series(1, $1::bigint) s) x) y
           left join ${contactRanges(counts)} r on r.account = y.a) z`,
    [counts.formSubmissions, counts.funnels],
  )
  await run(
    'funnel_short_link_clicks',
    `insert into funnel_short_link_clicks (id, account_id, link_id, clicked_at, referrer, user_agent, visitor_hash,
       is_bot, is_repeat)
     select pg_temp.seed_id('click', c), pg_temp.account_id(pg_temp.seed_account(f, $2)), pg_temp.seed_id('short-link', f),
       pg_temp.seed_at('click', c), case when c % 3 = 0 then 'https://social.example.com/' end, 'Mozilla/5.0 (seed)',
       md5('visitor' || c % 100000), c % 20 = 0, c % 4 = 0
     from (select c, (c - 1) * $2 / $1 + 1 as f from generate_series(1, $1::bigint) c) x`,
    [counts.clicks, counts.funnels],
  ) // The daily roll-up the links' statistics read, as each stored click adds to it.
  await run(
    'funnel_short_link_daily_clicks',
    `insert into funnel_short_link_daily_clicks (account_id, link_id, day, clicks, unique_clicks, bots)
     select account_id, link_id, (clicked_at at time zone 'UTC')::date, count(*),
       count(*) filter (where not is_bot and not is_repeat), count(*) filter (where is_bot)
     from funnel_short_link_clicks group by 1, 2, 3`,
  )
}

/**
 * Per account a template, a configuration (sending on completed orders, by email, to Google) and a Google
 * link; Stripe payments received and processed, each having scheduled one request, sent and some clicked;
 * the requests' daily roll-up.
 */
async function reviews(run: Run, counts: Counts): Promise<void> {
  const accounts = `select a, pg_temp.account_id(a) as account, pg_temp.seed_at('review-setup', a) as at
    from generate_series(0, ${counts.accounts - 1}) a`
  await run(
    'review_templates',
    `insert into review_templates (id, account_id, name, channel, subject, body, created_at, updated_at)
     select pg_temp.seed_id('review-template', a), account, 'Review request', 'email', 'How did we do?',
       'Hi {{customer_name}}, tell us how we did: {{review_link}}', at, at
     from (${accounts}) s`,
  )
  await run(
    'review_configurations',
    `insert into review_configurations (id, account_id, parent_account, name, enabled, trigger, delay_hours, platforms,
       template_id, conditions, send_method, from_email, follow_up, send_window, timezone, created_at, updated_at)
     select pg_temp.seed_id('review-configuration', a), account, pg_temp.account_id(pg_temp.seed_agency(a)),
       'Ask after every order', true, 'order_completed', 2, array['google'], pg_temp.seed_id('review-template', a),
       '{"exclude_refunded": true}'::jsonb, 'email', 'reviews@seed.example.com',
       '{"enabled": true, "delay_hours": 72}'::jsonb, '{"start": "09:00", "end": "18:00"}'::jsonb, 'UTC', at, at
     from (${accounts}) s`,
  )
  await run(
    'review_links',
    `insert into review_links (id, account_id, platform, url, created_at, updated_at)
     select pg_temp.seed_id('review-link', a), account, 'google', 'https://g.page/r/seed-' || a || '/review', at, at
     from (${accounts}) s`,
  )
  const events = `select e, a, pg_temp.account_id(a) as account, pg_temp.seed_at('review-event', e) as at,
      'customer-' || e || '@example.com' as email, 1000 + e % 20000 as amount
    from (select e, pg_temp.seed_account(e, $1) as a from generate_series(1, $1::bigint) e) s`
  await run(
    'review_webhook_events',
    `insert into review_webhook_events (id, source, event_id, type, trigger, account_id, customer_key, payload, status,
       created_at, processed_at)
     select pg_temp.seed_id('review-event', e), 'paymentprovider', 'evt_seed_' || e, 'payment_intent.succeeded',
       'order_completed', account, email,
       jsonb_build_object('id', 'evt_seed_' || e, 'object', 'event', 'type', 'payment_intent.succeeded',
         'created', extract(epoch from at)::bigint,
         'data', jsonb_build_object('object', jsonb_build_object('id', 'pi_seed_' || e, 'object', 'payment_intent',
           'amount', amount, 'currency', 'usd', 'status', 'succeeded', 'receipt_email', email,
           'metadata', jsonb_build_object('account_id', account)))),
       'processed', at, at + interval '1 second'
     from (${events}) s`,
    [counts.reviewEvents],
  )
  await run(
    'review_requests',
    `insert into review_requests (id, account_id, parent_account, event_id, source_ref, customer_key, customer_name,
       customer_email, platform, send_method, status, order_value, currency, code, scheduled_for, sent_at, clicked_at,
       created_at, updated_at)
     select pg_temp.seed_id_at('review-request', e, at + interval '1 second'), account,
       pg_temp.account_id(pg_temp.seed_agency(a)), pg_temp.seed_id('review-event', e), 'pi_seed_' || e, email,
       'Customer ' || e, email, 'google', 'email', case when e % 3 = 0 then 'clicked' else 'sent' end, amount, 'usd',
       pg_temp.seed_code('review-request', e), at + interval '2 hours', at + interval '2 hours',
       case when e % 3 = 0 then at + interval '5 hours' end, at + interval '1 second', at + interval '2 hours'
     from (${events}) s`,
    [counts.reviewEvents],
  ) // The daily roll-up the statistics read, as each request's writes keep it (sent and clicked ones: no reason).
  await run(
    'review_request_daily_counts',
    `insert into review_request_daily_counts (account_id, day, platform, status, reason, requests, sent, clicked)
     select account_id, (created_at at time zone 'UTC')::date, platform, status, '', count(*), count(sent_at),
       count(clicked_at)
     from review_requests group by 1, 2, 3, 4`,
  )
}

/**
 * Two campaigns per account (a page and a form each), leads captured into the account's contacts (failed
 * with no_contact_details in an account without any), and the Meta webhook event each arrived in.
 */
async function leads(run: Run, counts: Counts): Promise<void> {
  await run(
    'lead_campaigns',
    `insert into lead_campaigns (id, account_id, page_id, form_id, subscription_status, subscription_checked_at,
       created_at, updated_at)
     select pg_temp.seed_id('lead-campaign', c), pg_temp.account_id(c / 2), 'seed-page-' || c / 2, 'seed-form-' || c,
       'subscribed', at, at, at
     from (select c, pg_temp.seed_at('lead-campaign', c) as at from generate_series(0, ${2 * counts.accounts - 1}) c) s`,
  )
  const leadRows = `select l, a, a * 2 + l % 2 as campaign, r.first + l % r.count as contact,
      pg_temp.seed_at('lead', l) as at
    from (select l, pg_temp.seed_account(l, $1) as a from generate_series(1, $1::bigint) l) s
    left join ${contactRanges(counts)} r on r.account = s.a`
  await run(
    'leads',
    `insert into leads (id, leadgen_id, page_id, form_id, ad_id, account_id, campaign_id, status, reason, source,
       created_time, field_data, fields, contact_id, attempts, created_at, captured_at, updated_at)
     select pg_temp.seed_id_at('lead', l, at + interval '1 minute'), 'seed-lead-' || l, 'seed-page-' || a,
       'seed-form-' || campaign, 'seed-ad-' || a, pg_temp.account_id(a), pg_temp.seed_id('lead-campaign', campaign),
       case when contact is null then 'failed' else 'captured' end,
       case when contact is null then 'no_contact_details' end, 'webhook', at, field_data,
       case when contact is not null then jsonb_build_object('full_name', 'Contact ' || contact, 'email', email) end,
       pg_temp.seed_id('contact', contact), 1, at + interval '1 minute',
       case when contact is not null then at + interval '2 minutes' end, at + interval '2 minutes'
     from (select *, 'contact-' || contact || '@example.com' as email,
             case when contact is null then '[]'::jsonb else jsonb_build_array(
               jsonb_build_object('name', 'full_name', 'values', jsonb_build_array('Contact ' || contact)),
               jsonb_build_object('name', 'email', 'values', jsonb_build_array('contact-' || contact || '@example.com'))) end
               as field_data
           from (${leadRows}) s) t`,
    [counts.leads],
  )
  await run(
    'lead_webhook_events',
    `insert into lead_webhook_events (id, payload, processed_at, created_at)
     select pg_temp.seed_id_at('lead-event', l, at + interval '1 minute'),
       jsonb_build_object('object', 'page', 'entry', jsonb_build_array(jsonb_build_object(
         'id', 'seed-page-' || a, 'time', extract(epoch from at)::bigint, 'changes', jsonb_build_array(jsonb_build_object(
           'field', 'leadgen', 'value', jsonb_build_object('leadgen_id', 'seed-lead-' || l, 'page_id', 'seed-page-' || a,
             'form_id', 'seed-form-' || campaign, 'created_time', extract(epoch from at)::bigint)))))),
       at + interval '2 minutes', at + interval '1 minute'
     from (${leadRows}) s`,
    [counts.leads],
  )
}

/**
 * Apps holding the first three scopes, each user's consent to one app and the code that started that
 * grant; refresh tokens of those grants, all but each grant's newest revoked by the refresh that replaced
 * it; and the audit trail of issued, refreshed and revoked tokens.
 */
// Every app asks for the same three scopes (evaluated once per statement).
const APP_SCOPES = 'array(select scope from oauth_scopes order by scope limit 3)'

async function oauth(run: Run, counts: Counts): Promise<void> {
  const users = counts.accounts * USERS_PER_ACCOUNT
  const app = (u: string) => `pg_temp.seed_id('oauth-app', (${u}) % ${counts.apps})`
  await run(
    'oauth_apps',
    `insert into oauth_apps (id, name, client_secret_hash, redirect_uris, scopes, active, webhook_url, created_at, updated_at)
     select pg_temp.seed_id('oauth-app', i), 'App ' || i, encode(sha256(('secret' || i)::bytea), 'hex'),
       array['https://app-' || i || '.example.com/callback'],
       ${APP_SCOPES}, true, null,
       pg_temp.seed_at('oauth-app', i), pg_temp.seed_at('oauth-app', i)
     from generate_series(0, ${counts.apps - 1}) i`,
  )
  const grants = `select u, u / ${USERS_PER_ACCOUNT} as a, u % ${USERS_PER_ACCOUNT} as k, pg_temp.seed_at('grant', u) as at
    from generate_series(0, ${users - 1}) u`
  await run(
    'oauth_consents',
    `insert into oauth_consents (account_id, user_id, client_id, scopes, created_at, updated_at)
     select pg_temp.account_id(a), pg_temp.user_id(a, k), ${app('u')}, ${APP_SCOPES}, at, at
     from (${grants}) s`,
  )
  await run(
    'oauth_codes',
    `insert into oauth_codes (id, code_hash, client_id, user_id, account_id, scopes, redirect_uri, expires_at, used_at, created_at)
     select pg_temp.seed_id_at('oauth-code', u, at), encode(sha256(('code' || u)::bytea), 'hex'), ${app('u')},
       pg_temp.user_id(a, k), pg_temp.account_id(a), ${APP_SCOPES},
       'https://app-' || u % ${counts.apps} || '.example.com/callback', at + interval '10 minutes', at + interval '5 seconds', at
     from (${grants}) s`,
  )
  await run(
    'oauth_refresh_tokens',
    `insert into oauth_refresh_tokens (id, token_hash, code_id, client_id, user_id, account_id, scopes, expires_at,
       replaced_at, revoked_at, last_used, created_at)
     select pg_temp.seed_id_at('refresh-token', t, at), encode(sha256(('refresh' || t)::bytea), 'hex'),
       pg_temp.seed_id_at('oauth-code', u, pg_temp.seed_at('grant', u)), ${app('u')}, pg_temp.user_id(a, k),
       pg_temp.account_id(a), ${APP_SCOPES}, at + interval '90 days',
       replaced, replaced, coalesce(replaced, at), at
     from (select *, case when t < max(t) over (partition by u) then at + interval '1 hour' end as replaced
           from (select t, a, k, a * ${USERS_PER_ACCOUNT} + k as u, pg_temp.seed_at('refresh-token', t) as at
                 from (select t, pg_temp.seed_account(t, $1) as a, (t % ${USERS_PER_ACCOUNT})::int as k
                       from generate_series(1, $1::bigint) t) s) x) y`,
    [counts.refreshTokens],
  )
  await run(
    'oauth_audit_events',
    `insert into oauth_audit_events (id, event, client_id, user_id, account_id, ip, detail, created_at)
     select pg_temp.seed_id('oauth-audit', e), (array['token.issued', 'token.refreshed', 'token.refreshed', 'grant.revoked'])[1 + e % 4],
       ${app('u')}, pg_temp.user_id(a, k), pg_temp.account_id(a), '203.0.113.' || e % 250,
       jsonb_build_object('scopes', ${APP_SCOPES}), pg_temp.seed_at('oauth-audit', e)
     from (select e, a, k, a * ${USERS_PER_ACCOUNT} + k as u
           from (select e, pg_temp.seed_account(e, $1) as a, (e % ${USERS_PER_ACCOUNT})::int as k
                 from generate_series(1, $1::bigint) e) s) x`,
    [counts.auditEvents],
  )
}

async function doNotDisturb(run: Run, counts: Counts): Promise<void> {
  await run(
    'do_not_disturb_entries',
    `insert into do_not_disturb_entries (id, account_id, value, type, reason, created_at)
     select pg_temp.seed_id('dnd', d), pg_temp.account_id(pg_temp.seed_account(d, $1)), 'blocked-' || d || '@example.com',
       case when d % 5 = 0 then 'temporary' else 'permanent' end, case when d % 2 = 0 then 'unsubscribed' else '' end,
       pg_temp.seed_at('dnd', d)
     from generate_series(1, $1::bigint) d`,
    [counts.doNotDisturb],
  )
}

/** The service's tables (every table of the public schema the migrations do not fill). */
async function serviceTables(db: pg.ClientBase): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select tablename as name from pg_tables where schemaname = 'public' and tablename <> all($1) order by 1`,
    [MIGRATION_TABLES],
  )
  return rows.map((row) => row.name)
}

async function tablesHoldingRows(db: pg.ClientBase, tables: string[]): Promise<string[]> {
  const held: string[] = []
  for (const table of tables) {
    const { rows } = await db.query(`select exists (select 1 from "${table}") as held`)
    if (rows[0].held) held.push(table)
  }
  return held
}

/**
 * A connection ready for the families' SQL: the session functions, and settings for a bulk load (nothing is
 * lost if the server stops during a seed: it is run again).
 */
async function openSession(databaseUrl: string, counts: Counts): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  await db.query(`set synchronous_commit = off; set work_mem = '256MB'; set maintenance_work_mem = '512MB'`)
  await db.query(sessionFunctions(counts.accounts))
  return db
}

/**
 * The table's indexes that no constraint uses (neither its primary key nor a foreign key's target): built
 * once over the loaded rows, a sort, instead of updated row by row. Dropped in the caller's transaction.
 */
async function dropSecondaryIndexes(db: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string; definition: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
     from pg_index i
     where i.indrelid = $1::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [table],
  )
  for (const { name } of rows) await db.query(`drop index ${name}`)
  return rows.map((row) => row.definition)
}

/** Runs `work` on every item, each session taking the next item when it is free. */
async function onSessions<T>(
  sessions: pg.Client[],
  items: T[],
  work: (db: pg.Client, item: T) => Promise<void>,
) {
  const queue = [...items]
  await Promise.all(
    sessions.map(async (db) => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(db, item)
    }),
  )
}

type Family = (run: Run, counts: Counts, db: pg.ClientBase) => Promise<void>
// Longest first, so that the two sessions finish together (at --scale 1: communications with their events
// about half the work, then the room messages with their search words, the clicks, the contacts' search keys).
const FAMILIES: Family[] = [communications, rooms, funnels, contacts, oauth, reviews, leads, doNotDisturb]
const SESSIONS = 2

async function migrate(databaseUrl: string): Promise<void> {
  const handle = await openDatabase({ databaseUrl, poolSize: 1 })
  try {
    await migrateDatabase(handle, { databaseUrl })
  } finally {
    await handle.close()
  }
}

/**
 * What a seed leaves on its database, as the database's comment: the scale, the seed's version and the rows it
 * wrote, so that a bench can reuse a database already seeded at its scale. Cleared when a seed starts, written
 * when it ends: a seed that stopped half way leaves none.
 */
export interface SeedMarker extends SeedResult {
  scale: number
  version: string
}

/** This file and the migrations it seeds after: a change of either makes earlier seeds out of date. */
export function seedVersion(): string {
  const hash = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url)))
  hash.update(readFileSync(new URL('../drizzle/meta/_journal.json', import.meta.url)))
  return hash.digest('hex').slice(0, 16)
}

async function writeMarker(db: pg.ClientBase, marker: SeedMarker | null): Promise<void> {
  const text = marker && JSON.stringify({ seed_volume: marker })
  const { rows } = await db.query(
    `select format('comment on database %I is %L', current_database(), $1::text) as statement`,
    [text],
  )
  await db.query(rows[0].statement)
}

/** The marker of the database's last complete seed; undefined when it was not seeded, or not to the end. */
export async function readSeedMarker(databaseUrl: string): Promise<SeedMarker | undefined> {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  try {
    const { rows } = await db.query<{ comment: string | null }>(
      `select shobj_description(oid, 'pg_database') as comment from pg_database where datname = current_database()`,
    )
    const comment = rows[0]?.comment
    return comment?.startsWith('{"seed_volume":') ? JSON.parse(comment).seed_volume : undefined
  } finally {
    await db.end()
  }
}

export async function seedVolume(databaseUrl: string, options: SeedOptions): Promise<SeedResult> {
  const startedAt = performance.now()
  const log = options.log ?? (() => undefined)
  const counts = countsAt(options.scale)
  const sessions = [await openSession(databaseUrl, counts)]
  try {
    const [db] = sessions as [pg.Client]
    // Looked at before migrating: a database holding anyone's rows is left as it was.
    const held = await tablesHoldingRows(db, await serviceTables(db))
    if (held.length > 0 && !options.reset)
      throw new Error(
        `the database already holds data (${held.slice(0, 3).join(', ')}…): pass --reset to empty it`,
      )
    await writeMarker(db, null)
    await migrate(databaseUrl)
    if (options.reset) {
      const tables = await serviceTables(db)
      await db.query(`truncate ${tables.map((table) => `"${table}"`).join(', ')} cascade`)
    }

    const rows: Record<string, number> = {}
    // Each table is written by one statement, in a transaction of its own with its secondary indexes.
    const runOn =
      (session: pg.Client): Run =>
      async (table, statement, values) => {
        const tableStartedAt = performance.now()
        await session.query('begin')
        try {
          // References checked at commit are checked by the insert instead: an index cannot be built over
          // rows whose checks are pending.
          await session.query('set constraints all immediate')
          const indexes = await dropSecondaryIndexes(session, table)
          rows[table] = (await session.query(statement, values)).rowCount ?? 0
          for (const definition of indexes) await session.query(definition)
          await session.query('commit')
        } catch (error) {
          await session.query('rollback')
          throw error
        }
        log(`${table}: ${rows[table]?.toLocaleString('en')} rows in ${seconds(tableStartedAt)} s`)
      }
    const passwordHash = await hash(SEED_PASSWORD, { salt: Buffer.from('seed-volume-salt') })
    await accountsAndUsers(runOn(db), counts, passwordHash)
    while (sessions.length < SESSIONS) sessions.push(await openSession(databaseUrl, counts))
    await onSessions(sessions, FAMILIES, (session, family) => family(runOn(session), counts, session))
    // As autovacuum leaves tables after a bulk load: statistics taken, visibility maps set.
    const vacuumStartedAt = performance.now()
    await onSessions(sessions, Object.keys(rows), (session, table) =>
      session.query(`vacuum analyze ${table}`).then(),
    )
    log(`vacuum analyze: ${seconds(vacuumStartedAt)} s`)
    const result = { rows, seconds: Number(seconds(startedAt)) }
    await writeMarker(db, { scale: options.scale, version: seedVersion(), ...result })
    return result
  } finally {
    await Promise.all(sessions.map((session) => session.end()))
  }
}

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1)

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scale: { type: 'string', default: '1' }, reset: { type: 'boolean' } },
  })
  const scale = Number(values.scale)
  const databaseUrl = process.env.DATABASE_URL
  if (!(scale > 0)) throw new Error(`--scale must be a number above 0, not ${values.scale}`)
  if (!databaseUrl?.startsWith('postgres'))
    throw new Error(
      'seed:volume fills PostgreSQL only: set DATABASE_URL (the embedded PGlite database is not seeded)',
    )
  const result = await seedVolume(databaseUrl, {
    scale,
    reset: values.reset,
    log: (line) => console.log(line),
  })
  const total = Object.values(result.rows).reduce((sum, count) => sum + count, 0)
  console.log(`seeded ${total.toLocaleString('en')} rows at --scale ${scale} in ${result.seconds} s`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: Error) => {
    console.error(`error: ${error.message}`)
    process.exitCode = 1
  })
}
