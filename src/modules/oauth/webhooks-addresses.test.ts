import type { LookupAddress } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { type FakeServer, startFakeServer } from '../../../test/fakes/http-server.js'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { createUser, obtainTokens, registerApp } from '../../../test/helpers/oauth.js'
import { behindTlsProxy, PRODUCTION_ENV } from '../../../test/helpers/production.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { OutboundAddressPolicy } from '../../platform/http/outbound-address.js'
import { type AppRow, findApp } from './apps.repository.js'
import { attemptDelivery } from './webhooks.service.js'

/**
 * App webhook URLs in production: public addresses only (and the ranges APP_WEBHOOK_ALLOWED_CIDRS lists), at
 * registration and again at delivery, after DNS resolution. Outside production any address is taken
 * (webhooks.test.ts delivers to 127.0.0.1).
 */

test.override('appEnv', {
  ...PRODUCTION_ENV,
  // The authorization endpoints require HTTPS in production: requests come as from a TLS proxy here.
  TRUST_PROXY: '127.0.0.1',
  LOG_LEVEL: 'silent',
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  // 127.0.0.1 is where this file's receiver listens; the rest of 127.0.0.0/8 stays refused.
  APP_WEBHOOK_ALLOWED_CIDRS: '10.1.0.0/16, 127.0.0.1/32',
})

const REFUSED_AT_REGISTRATION: [string, string][] = [
  ['http://127.0.0.2/hooks', '127.0.0.2 is not a public address (loopback)'],
  ['http://2130706434/hooks', '127.0.0.2 is not a public address (loopback)'],
  ['http://0x7f000002/hooks', '127.0.0.2 is not a public address (loopback)'],
  ['http://127.2/hooks', '127.0.0.2 is not a public address (loopback)'],
  ['http://[::1]/hooks', '::1 is not a public address (loopback)'],
  ['http://[::ffff:127.0.0.2]/hooks', '::ffff:7f00:2 is not a public address (loopback)'],
  ['http://10.0.0.1/hooks', '10.0.0.1 is not a public address (private)'],
  ['https://172.16.5.4/hooks', '172.16.5.4 is not a public address (private)'],
  ['http://192.168.1.1:8080/hooks', '192.168.1.1 is not a public address (private)'],
  ['http://100.64.0.1/hooks', '100.64.0.1 is not a public address (shared (CGNAT))'],
  ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is not a public address (link-local)'],
  ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is not a public address (link-local)'],
  ['http://[fe80::1]/hooks', 'fe80::1 is not a public address (link-local)'],
  ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is not a public address (unique-local)'],
  ['http://0.0.0.0/hooks', '0.0.0.0 is not a public address (unspecified)'],
  ['http://0/hooks', '0.0.0.0 is not a public address (unspecified)'],
  ['http://[::]/hooks', ':: is not a public address (unspecified)'],
  ['http://224.0.0.1/hooks', '224.0.0.1 is not a public address (multicast)'],
  ['http://[ff02::1]/hooks', 'ff02::1 is not a public address (multicast)'],
  ['http://255.255.255.255/hooks', '255.255.255.255 is not a public address (reserved)'],
  ['http://[64:ff9b::a9fe:a9fe]/hooks', '64:ff9b::a9fe:a9fe is not a public address (link-local)'],
]

const createApp = (t: TestApp, webhookUrl: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/admin/oauth/apps',
    headers: adminHeaders,
    payload: {
      name: 'Hub',
      redirect_uris: ['https://hub.example.com/callback'],
      scopes: ['crm.contacts.read'],
      webhook_url: webhookUrl,
    },
  })

describe('app webhook URLs at registration, in production', () => {
  test('refuses a webhook_url on each kind of non-public address, however the address is written, creating no app', async ({
    t,
  }) => {
    const before = (await t.app.inject({ url: '/v1/admin/oauth/apps', headers: adminHeaders })).json()
    for (const [url, reason] of REFUSED_AT_REGISTRATION) {
      const response = await createApp(t, url)
      expect(response.statusCode, url).toBe(400)
      expect(response.json(), url).toEqual({
        success: false,
        errno: 400,
        message: `webhook_url must be a public address: ${reason}`,
      })
    }
    const after = (await t.app.inject({ url: '/v1/admin/oauth/apps', headers: adminHeaders })).json()
    expect(after.pagination.total).toBe(before.pagination.total)
  })

  test('refuses such a webhook_url when an app is changed, keeping the one it had', async ({ t }) => {
    const created = await createApp(t, 'https://hooks.example.com/in')
    expect(created.statusCode).toBe(201)
    const { _id: id } = created.json().data
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:9000/']) {
      const changed = await t.app.inject({
        method: 'PATCH',
        url: `/v1/admin/oauth/apps/${id}`,
        headers: adminHeaders,
        payload: { webhook_url: url },
      })
      expect(changed.statusCode, url).toBe(400)
      expect(changed.json().message).toMatch(/^webhook_url must be a public address: /)
    }
    const app = await t.app.inject({ url: `/v1/admin/oauth/apps/${id}`, headers: adminHeaders })
    expect(app.json().data.webhook_url).toBe('https://hooks.example.com/in')
  })

  test('accepts public addresses, names, and the ranges APP_WEBHOOK_ALLOWED_CIDRS lists', async ({ t }) => {
    for (const url of [
      'https://hooks.example.com/in',
      'http://93.184.215.14/in',
      'https://[2606:4700:4700::1111]/in',
      'http://10.1.200.7:8080/in',
      'http://127.0.0.1:9000/in',
    ]) {
      expect((await createApp(t, url)).statusCode, url).toBe(201)
    }
    expect((await createApp(t, 'http://10.2.0.1/in')).statusCode).toBe(400)
  })
})

describe('app webhook delivery, in production', () => {
  let receiver: FakeServer
  beforeAll(async () => {
    receiver = await startFakeServer((_request, response) => response.end())
  })
  afterAll(() => receiver.close())
  const port = () => new URL(receiver.url).port
  const delivered = (path: string) => receiver.requests.filter((request) => request.url === path)

  /** An app with a live grant reading the tenant's contacts, told at `webhookUrl`. */
  async function listeningApp(t: TestApp, accountId: string, email: string, webhookUrl: string) {
    const app = behindTlsProxy(t.app)
    const client = await registerApp(app, { scopes: ['crm.contacts.read'], webhook_url: webhookUrl })
    await createUser(app, email, [accountId])
    await obtainTokens(app, client, email)
    return client
  }

  test('delivers to an allowed range, and records a refused address as a failed attempt naming it', async ({
    t,
    owner,
  }) => {
    await listeningApp(t, owner.accountId, 'allowed@hooks.example', `${receiver.url}/allowed`)
    const refused = await listeningApp(t, owner.accountId, 'refused@hooks.example', `${receiver.url}/refused`)
    // Registered before the check (or before the range was taken off the allowed list): a stored address
    // is checked again when it is called, and so is any address a redirect would lead to.
    await t.app.platform.db.execute(
      sql`update oauth_apps set webhook_url = ${`http://127.0.0.2:${port()}/refused?token=kept-secret`}
        where id = ${refused._id}`,
    )
    const contact = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { email: 'grace@hooks.example' },
    })
    expect(contact.statusCode).toBe(201)

    await eventually(() => expect(delivered('/allowed')).toHaveLength(1))
    const delivery = await eventually(async () => {
      const listed = await t.app.inject({
        url: `/v1/admin/oauth/apps/${refused._id}/webhook-deliveries`,
        headers: adminHeaders,
      })
      const [first] = listed.json().data
      expect(first?.attempts).toHaveLength(1)
      return first
    })
    expect(delivery.status).toBe('retrying')
    expect(delivery.attempts[0]).toMatchObject({
      status_code: null,
      error: 'refused: 127.0.0.2 is not a public address (loopback)',
    })
    expect(JSON.stringify(delivery)).not.toContain('kept-secret')
    expect(delivered('/refused')).toHaveLength(0)
  })

  /** A resolver answering every name with `addresses`, counting its calls. */
  function resolverTo(...addresses: string[]) {
    const calls: string[] = []
    const resolve = ((hostname, _options, callback) => {
      calls.push(hostname)
      const found: LookupAddress[] = addresses.map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }))
      ;(callback as (error: null, found: LookupAddress[]) => void)(null, found)
    }) as LookupFunction
    return { resolve, calls }
  }

  test('refuses a name that resolves to a non-public address, checking every address, and connects to the checked one', async ({
    t,
    stranger,
  }) => {
    // A name only the injected resolver knows: reaching the receiver proves the connection went to what
    // was checked, with no second resolution.
    const client = await listeningApp(
      t,
      stranger.accountId,
      'named@hooks.example',
      `http://hooks.rebinding.test:${port()}/named`,
    )
    const delivery = {
      id: newId(),
      clientId: client._id,
      accountId: stranger.accountId,
      event: 'contact.created',
      notification: {
        event: 'contact.created',
        data: {},
        account_id: stranger.accountId,
        timestamp: new Date().toISOString(),
      },
      seriesAttempts: 0,
      leasedUntil: new Date(),
      createdAt: new Date(),
      app: (await findApp(t.app.platform.db, client._id)) as AppRow,
    }
    const deliver = (addresses: OutboundAddressPolicy) =>
      attemptDelivery(
        {
          db: t.app.platform.db,
          secretsKey: t.config.secretsKey,
          log: t.app.log,
          addresses,
          timeoutMs: 5_000,
          grantRecheckAfterMs: 0,
        },
        delivery,
      )
    const refusal = (message: string) => ({
      attempt: expect.objectContaining({ status_code: null, error: `refused: ${message}` }),
      delivered: false,
    })

    const loopback = resolverTo('127.0.0.1')
    expect(await deliver(new OutboundAddressPolicy([], loopback.resolve))).toEqual(
      refusal('127.0.0.1 (resolved from hooks.rebinding.test) is not a public address (loopback)'),
    )
    const mixed = resolverTo('93.184.215.14', '127.0.0.1')
    expect(await deliver(new OutboundAddressPolicy([], mixed.resolve))).toEqual(
      refusal('127.0.0.1 (resolved from hooks.rebinding.test) is not a public address (loopback)'),
    )
    expect(delivered('/named')).toHaveLength(0)

    const allowedLoopback = new OutboundAddressPolicy(
      [{ address: '127.0.0.1', prefix: 32, family: 'ipv4' }],
      loopback.resolve,
    )
    const callsBefore = loopback.calls.length
    expect(await deliver(allowedLoopback)).toMatchObject({ attempt: { status_code: 200 }, delivered: true })
    expect(delivered('/named')).toHaveLength(1)
    expect(loopback.calls.slice(callsBefore)).toEqual(['hooks.rebinding.test'])
  })
})
