import { randomBytes } from 'node:crypto'
import type { Target } from './scenario.js'

const ADMIN_TIMEOUT_MS = 15_000

/** POSTs to the admin API and returns the envelope's `data`; any non-2xx answer fails the run. */
export async function adminPost<T>(target: Target, path: string, body: unknown): Promise<T> {
  const response = await fetch(new URL(path, target.baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
  return (JSON.parse(text) as { data: T }).data
}

export interface Member {
  accountId: string
  userId: string
  /** The user's chat identity in the account (`conversation.id` in the token). */
  conversationId: string
  /** A platform JWT (Bearer) of the user in the account. */
  token: string
}

/** A fresh account whose main member holds a platform JWT valid for `ttlSeconds`. */
export async function createMember(target: Target, ttlSeconds = 3600): Promise<Member> {
  const suffix = randomBytes(4).toString('hex')
  const account = await adminPost<{ _id: string }>(target, '/v1/admin/accounts', { name: `bench ${suffix}` })
  return addMember(target, account._id, ttlSeconds)
}

/** Another user of the account (their own chat identity) holding a platform JWT valid for `ttlSeconds`. */
export async function addMember(target: Target, accountId: string, ttlSeconds = 3600): Promise<Member> {
  const suffix = randomBytes(4).toString('hex')
  const user = await adminPost<{ _id: string; memberships: { conversation_id: string }[] }>(
    target,
    '/v1/admin/users',
    {
      email: `bench-${suffix}@example.com`,
      password: randomBytes(12).toString('hex'),
      name: `Bench ${suffix}`,
      account_id: accountId,
      main: true,
    },
  )
  const { token } = await adminPost<{ token: string }>(target, '/v1/admin/tokens', {
    user_id: user._id,
    account_id: accountId,
    ttl: ttlSeconds,
  })
  const conversationId = user.memberships[0]?.conversation_id ?? ''
  return { accountId, userId: user._id, conversationId, token }
}
