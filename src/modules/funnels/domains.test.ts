import { describe, expect } from 'vitest'
import { anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import { cacheProbe, FUNNELS, funnelCall, seedFunnel, uniqueHostname } from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { DOMAIN_TAKEN, INVALID_HOSTNAME } from './domains.service.js'

describe('funnel domains', () => {
  test('adds a domain with its hostname lower-cased, SSL off unless said', async ({ t, owner }) => {
    const name = uniqueHostname()
    const created = await funnelCall(t.app, owner, 'POST', '/domains', { name: ` ${name.toUpperCase()} ` })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: anId,
        name,
        ssl_enabled: false,
        created_at: expect.any(String),
      },
    })
    const secure = await funnelCall(t.app, owner, 'POST', '/domains', {
      name: uniqueHostname(),
      ssl_enabled: true,
    })
    expect(secure.json().data.ssl_enabled).toBe(true)
  })

  test('refuses what is not a hostname, naming the field', async ({ t, owner }) => {
    for (const name of [
      'localhost',
      '192.168.0.1',
      'shop..example.com',
      '-shop.example.com',
      'shop.example.com.',
      'https://shop.example.com',
      'shop_1.example.com',
      `${'a'.repeat(64)}.com`,
    ]) {
      const refused = await funnelCall(t.app, owner, 'POST', '/domains', { name })
      expect(refused.json(), name).toMatchObject({ success: false, errno: 400, message: INVALID_HOSTNAME })
    }
    expect((await funnelCall(t.app, owner, 'POST', '/domains', {})).json().message).toBe('name is required')
  })

  test('gives a hostname to one account only: 409 for the same or another account, in any case', async ({
    t,
    owner,
    stranger,
  }) => {
    const name = uniqueHostname()
    await funnelCall(t.app, owner, 'POST', '/domains', { name })
    for (const [tenant, again] of [
      [owner, name],
      [stranger, name.toUpperCase()],
    ] as const) {
      const taken = await funnelCall(t.app, tenant, 'POST', '/domains', { name: again })
      expect(taken.statusCode).toBe(409)
      expect(taken.json()).toMatchObject({ success: false, errno: 409, message: DOMAIN_TAKEN })
    }
  })

  test('lists the account domains by name, paginated and searchable, never another account’s', async ({
    t,
    owner,
    stranger,
  }) => {
    const suffix = newId().slice(-10)
    for (const prefix of ['b', 'a', 'c']) {
      await funnelCall(t.app, stranger, 'POST', '/domains', { name: `${prefix}-${suffix}.example.org` })
    }
    const page = await funnelCall(t.app, stranger, 'GET', `/domains?search=${suffix}&limit=2`)
    expect(page.json().pagination).toEqual({ total: 3, page: 1, limit: 2, pages: 2 })
    expect(page.json().data.map((d: { name: string }) => d.name)).toEqual([
      `a-${suffix}.example.org`,
      `b-${suffix}.example.org`,
    ])
    const asOwner = await funnelCall(t.app, owner, 'GET', `/domains?search=${suffix}`)
    expect(asOwner.json().pagination.total).toBe(0)
  })

  test('deletes a domain: its funnels lose it and are forgotten by the step cache; hidden from others', async ({
    t,
    owner,
    stranger,
  }) => {
    const seeded = await seedFunnel(t.app, owner, { domainName: uniqueHostname() })
    const forgotten = cacheProbe(t.app, seeded.funnelId)
    const url = `${FUNNELS}/domains/${seeded.domainId}`
    await expectHiddenFromOtherAccounts(t.app, { method: 'DELETE', url }, owner, stranger)
    expect(forgotten()).toBe(true)
    const funnel = await funnelCall(t.app, owner, 'GET', `/${seeded.funnelId}`)
    expect(funnel.json().data).toMatchObject({ domain_id: null, domain: null })
    const again = await funnelCall(t.app, owner, 'DELETE', `/domains/${seeded.domainId}`)
    expect(again.json()).toMatchObject({ errno: 404, message: 'Domain not found' })
    // The hostname is free again.
    const reused = await funnelCall(t.app, stranger, 'POST', '/domains', { name: seeded.domainName })
    expect(reused.statusCode).toBe(201)
  })

  test("refuses to delete a domain whose funnel would land on a path the default host's funnel holds: 409", async ({
    t,
    owner,
  }) => {
    const onDefaultHost = await seedFunnel(t.app, owner, { name: 'Default sale' })
    const onDomain = await seedFunnel(t.app, owner, {
      domainName: uniqueHostname(),
      basePath: onDefaultHost.basePath,
    })
    const refused = await funnelCall(t.app, owner, 'DELETE', `/domains/${onDomain.domainId}`)
    expect(refused.statusCode).toBe(409)
    expect(refused.json()).toMatchObject({
      success: false,
      errno: 409,
      message: 'Path already in use',
      additional_info: {
        path: onDefaultHost.basePath,
        conflicting_funnel: { _id: onDefaultHost.funnelId, name: 'Default sale' },
      },
    })
    const kept = await funnelCall(t.app, owner, 'GET', `/${onDomain.funnelId}`)
    expect(kept.json().data.domain).toMatchObject({ _id: onDomain.domainId })
    // Once the default host's funnel is gone, the domain goes and its funnel takes the path there.
    await funnelCall(t.app, owner, 'DELETE', `/${onDefaultHost.funnelId}`)
    expect((await funnelCall(t.app, owner, 'DELETE', `/domains/${onDomain.domainId}`)).statusCode).toBe(200)
  })

  test('answers the delete with the spec envelope and refuses a malformed id', async ({ t, owner }) => {
    const domain = (await funnelCall(t.app, owner, 'POST', '/domains', { name: uniqueHostname() })).json()
      .data
    const deleted = await funnelCall(t.app, owner, 'DELETE', `/domains/${domain._id}`)
    expect(deleted.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: { _id: domain._id, deleted: true },
    })
    expect((await funnelCall(t.app, owner, 'DELETE', '/domains/nope')).statusCode).toBe(400)
  })

  test('requires a bearer token', async ({ t }) => {
    expect((await t.app.inject({ url: `${FUNNELS}/domains` })).statusCode).toBe(401)
  })
})
