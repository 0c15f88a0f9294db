import { createPrivateKey } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { io, type Socket } from 'socket.io-client'
import { leadEvent, signedLeadPost } from '../test/helpers/leads.js'
import { addLead, type LeadPage, type RoomOf, type SentRecord } from './neighbours-setup.js'
import { eventBatch, sendgridSignature, signedCharge } from './neighbours-steady.js'
import { VIA_TLS_PROXY } from './scenario.js'
import { ROOMS_PATH } from './scenarios/rooms-seed.js'

/**
 * Account A's flood, driven from the bench process: a Stripe import's charges (each a
 * review request due at once), SendGrid's delivery events in full batches, a year of leads synced through
 * Meta's webhook, an integration looping on the API at ten times its budget, and room messages to members
 * connected on sockets. The posts go as fast as the instances take them; the API calls and the messages
 * keep their rate until the flood is told to stop.
 */

export interface FloodPlan {
  instances: string[]
  runId: string
  accountId: string
  token: string
  stripeSecret: string
  eventKeyPem: string
  leadsAppSecret: string
  records: SentRecord[]
  uid: string
  /** Charges posted (each one review request). */
  reviews: number
  /** Delivery events, posted in batches of `eventsPerBatch`. */
  events: number
  eventsPerBatch: number
  leads: number
  leadPages: LeadPage[]
  /** API calls a second (ten times A's budget), with at most `apiInFlight` unanswered: those due meanwhile are not sent. */
  apiRate: number
  apiInFlight: number
  /** Room messages a second, from the rooms' members in turn. */
  messageRate: number
  rooms: RoomOf[]
  /** Concurrent posts per instance, for each kind of post. */
  connections: number
}

export interface FloodResult {
  /** Each kind of post: answers of every attempt by status, posts accepted (200), posts given up. */
  reviews: Posted
  leads: Posted
  /** `events`: the events of the batches accepted. */
  events: Posted & { events: number }
  api: {
    sent: number
    skipped: number
    statuses: Record<string, number>
    rateLimitHeaders: number
    retryAfter: number
  }
  messages: { sent: number; statuses: Record<string, number>; delivered: number }
  /** Customer emails of A's charges accepted, and A's leads (Graph id, email). */
  customers: string[]
  leadEmails: Map<string, string>
  /** From the first post to the last answer of the posts (the charges, batches and leads). */
  postedSeconds: number
}

export interface Posted {
  posts: number
  accepted: number
  /** Which posts were accepted, by index. */
  acceptedIndex: boolean[]
  /** Not posted (or not to the end of their retries) when the flood was stopped. */
  notSent: number
  /** Refused RETRIES + 1 times (or never answered): what the provider would give up on. */
  givenUp: number
  statuses: Record<string, number>
  /** From the first post to the last answer. */
  seconds: number
}

/** One post of a provider's: built again for each attempt (a fresh signature and timestamp). */
type ProviderPost = () => { path: string; headers: Record<string, string>; body: string }

// Providers deliver again what was not acknowledged (Stripe, SendGrid and Meta all retry on a 5xx or a
// timeout, for hours): each post is tried up to this many more times, after Retry-After or a second.
const RETRIES = 10
const RETRY_DELAY_MS = 1_000

/**
 * Posts each of `posts` on `connections` concurrent posts per instance (instances in turn), each until it is
 * answered 200 or has been tried RETRIES more times.
 */
async function postAll(
  instances: string[],
  posts: ProviderPost[],
  connections: number,
  stopped: () => boolean,
): Promise<Posted> {
  const result: Posted = {
    posts: posts.length,
    accepted: 0,
    acceptedIndex: posts.map(() => false),
    notSent: 0,
    givenUp: 0,
    statuses: {},
    seconds: 0,
  }
  const startedAt = performance.now()
  let next = 0
  const poster = async (instance: string) => {
    for (let i = next++; i < posts.length && !stopped(); i = next++) {
      const build = posts[i] as ProviderPost
      let accepted = false
      for (let attempt = 0; attempt <= RETRIES && !accepted && !(attempt > 0 && stopped()); attempt++) {
        const { path, headers, body } = build()
        let wait = RETRY_DELAY_MS
        try {
          const response = await fetch(new URL(path, instance), {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...VIA_TLS_PROXY, ...headers },
            body,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          })
          await response.arrayBuffer()
          count(result.statuses, response.status)
          accepted = response.status === 200
          const retryAfter = Number(response.headers.get('retry-after'))
          if (retryAfter > 0) wait = retryAfter * 1000
        } catch {
          count(result.statuses, 'error')
        }
        if (!accepted && attempt < RETRIES) await delay(wait)
      }
      if (accepted) {
        result.accepted++
        result.acceptedIndex[i] = true
      } else if (!stopped()) result.givenUp++
    }
  }
  await Promise.all(
    Array.from({ length: connections * instances.length }, (_, i) =>
      poster(instances[i % instances.length] as string),
    ),
  )
  result.seconds = (performance.now() - startedAt) / 1000
  result.notSent = posts.length - result.accepted - result.givenUp
  return result
}

const count = (statuses: Record<string, number>, status: number | string) => {
  statuses[String(status)] = (statuses[String(status)] ?? 0) + 1
}
const TICK_MS = 5
const REQUEST_TIMEOUT_MS = 30_000

/** Splits `items` between the instances, in turn. */
const _split = <T>(items: T[], parts: number): T[][] =>
  Array.from({ length: parts }, (_, p) => items.filter((_, i) => i % parts === p))

/** Sends `send(n)` at `rate` a second, open loop, until `stopped()`; waits for the last to answer. */
async function atRate(rate: number, stopped: () => boolean, send: (n: number) => Promise<void>) {
  if (rate <= 0) return
  const inFlight = new Set<Promise<void>>()
  const startedAt = performance.now()
  let sent = 0
  while (!stopped()) {
    const due = Math.floor(((performance.now() - startedAt) / 1000) * rate)
    for (; sent < due; sent++) {
      const pending = send(sent).finally(() => inFlight.delete(pending))
      inFlight.add(pending)
    }
    await delay(TICK_MS)
  }
  await Promise.all(inFlight)
}

/** A's members connected on sockets (instances in turn): the fan-out of A's messages is part of the flood. */
async function connectMembers(plan: FloodPlan, onMessage: () => void): Promise<Socket[]> {
  const members = plan.rooms.flatMap((room) => room.members)
  const unique = [...new Map(members.map((member) => [member.userId, member])).values()]
  return Promise.all(
    unique.map(
      (member, i) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = io(plan.instances[i % plan.instances.length], {
            auth: { token: member.token },
            transports: ['websocket'],
            reconnection: false,
            forceNew: true,
          })
          socket.on('message:new', onMessage)
          socket.once('connect', () => resolve(socket))
          socket.once('connect_error', (error) =>
            reject(new Error(`A's member could not connect: ${error.message}`)),
          )
        }),
    ),
  )
}

export interface Flood {
  /** Resolves when every charge, batch and lead is posted and answered. */
  posted: Promise<void>
  /** Stops the API calls and the messages; the figures once all has answered. */
  stop(): Promise<FloodResult>
}

/** Connects A's members, then starts the flood. */
export async function startFlood(plan: FloodPlan): Promise<Flood> {
  const eventKey = createPrivateKey(plan.eventKeyPem)
  let delivered = 0
  const sockets = await connectMembers(plan, () => {
    delivered++
  })
  const instances = plan.instances
  const customers: string[] = []
  const charges: ProviderPost[] = Array.from({ length: plan.reviews }, (_, n) => {
    const email = `a-customer-${plan.runId}-${n}@bench.example`
    customers.push(email)
    return () => ({
      path: '/reviews/webhook/paymentprovider/charge',
      ...signedCharge(plan.stripeSecret, `${plan.runId}_a_${n}`, plan.accountId, email),
    })
  })
  // Each lead added to Graph as its event is built, before the posts: one lead an event.
  const leadEmails = new Map<string, string>()
  const leadPosts: ProviderPost[] = Array.from({ length: plan.leads }, (_, n) => {
    const page = plan.leadPages[n % plan.leadPages.length] as LeadPage
    const lead = addLead(page, n)
    leadEmails.set(lead.leadgenId, lead.email)
    const { headers, payload } = signedLeadPost(
      leadEvent([{ leadgen_id: lead.leadgenId, page_id: page.pageId, form_id: page.formId }]),
      plan.leadsAppSecret,
    )
    return () => ({ path: '/webhooks/socialnet/leads', headers, body: payload })
  })
  // SendGrid's batches, built as they go (a batch is 1,000 events), signed at each attempt.
  const batches = Math.ceil(plan.events / plan.eventsPerBatch)
  const batchPosts: ProviderPost[] = Array.from({ length: batches }, (_, b) => {
    let body: string | undefined
    return () => {
      body ??= eventBatch(
        `${plan.runId}-a`,
        b * plan.eventsPerBatch,
        Math.min(plan.eventsPerBatch, plan.events - b * plan.eventsPerBatch),
        plan.records,
        plan.accountId,
        plan.uid,
      )
      return { path: '/v1/e/mailprovider/webhook', headers: sendgridSignature(eventKey, body), body }
    }
  })
  let stopped = false
  const startedAt = performance.now()
  let postsDoneAt = startedAt
  let reviews: Posted | undefined
  let leads: Posted | undefined
  let events: Posted | undefined
  const posted = Promise.all([
    postAll(instances, charges, plan.connections, () => stopped).then((result) => {
      reviews = result
    }),
    postAll(instances, leadPosts, plan.connections, () => stopped).then((result) => {
      leads = result
    }),
    postAll(instances, batchPosts, plan.connections, () => stopped).then((result) => {
      events = result
    }),
  ]).then(() => {
    postsDoneAt = performance.now()
  })

  const api = {
    sent: 0,
    skipped: 0,
    statuses: {} as Record<string, number>,
    rateLimitHeaders: 0,
    retryAfter: 0,
  }
  let apiInFlight = 0
  const apiCalls = atRate(
    plan.apiRate,
    () => stopped,
    async (n) => {
      if (apiInFlight >= plan.apiInFlight) {
        api.skipped++
        return
      }
      apiInFlight++
      api.sent++
      try {
        const response = await fetch(new URL('/v1/contacts?limit=20', instances[n % instances.length]), {
          headers: { authorization: `Bearer ${plan.token}` },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        })
        await response.arrayBuffer()
        count(api.statuses, response.status)
        if (response.headers.has('ratelimit')) api.rateLimitHeaders++
        if (response.headers.has('retry-after')) api.retryAfter++
      } catch {
        count(api.statuses, 'error')
      } finally {
        apiInFlight--
      }
    },
  )
  const senders = plan.rooms.flatMap((room) => room.members.map((member) => ({ room, member })))
  const messages = { sent: 0, statuses: {} as Record<string, number>, delivered: 0 }
  const roomMessages = atRate(
    plan.messageRate,
    () => stopped,
    async (n) => {
      const { room, member } = senders[n % senders.length] as (typeof senders)[number]
      messages.sent++
      try {
        const response = await fetch(
          new URL(`${ROOMS_PATH}/${room.id}/messages`, instances[n % instances.length]),
          {
            method: 'POST',
            headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ content: `neighbours a ${n}` }),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          },
        )
        await response.arrayBuffer()
        count(messages.statuses, response.status)
      } catch {
        count(messages.statuses, 'error')
      }
    },
  )

  return {
    posted,
    async stop() {
      stopped = true
      await Promise.all([posted, apiCalls, roomMessages])
      for (const socket of sockets) socket.disconnect()
      messages.delivered = delivered
      const done = (posted: Posted | undefined) => posted as Posted
      return {
        reviews: done(reviews),
        leads: done(leads),
        events: {
          ...done(events),
          events: done(events).acceptedIndex.reduce(
            (sum, accepted, b) =>
              accepted ? sum + Math.min(plan.eventsPerBatch, plan.events - b * plan.eventsPerBatch) : sum,
            0,
          ),
        },
        api,
        messages,
        customers: customers.filter((_, n) => done(reviews).acceptedIndex[n]),
        leadEmails,
        postedSeconds: (postsDoneAt - startedAt) / 1000,
      }
    },
  }
}
