import { createHash } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { anId, expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  builderDocument,
  cacheProbe,
  FUNNELS,
  funnelCall,
  seedFunnel,
  softDeleteFunnel,
} from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A seeded funnel's first step, and the calls on its components. */
async function stepOf(t: TestApp, tenant: Tenant) {
  const { funnelId, stepIds } = await seedFunnel(t.app, tenant)
  const url = `/${funnelId}/steps/${stepIds[0]}`
  return {
    funnelId,
    stepId: stepIds[0] as string,
    url,
    save: (builderComponents: object, as = tenant) =>
      funnelCall(t.app, as, 'POST', `${url}/components`, { builderComponents }),
    backups: async () => (await funnelCall(t.app, tenant, 'GET', `${url}/backups`)).json().data,
    current: async () => (await funnelCall(t.app, tenant, 'GET', `${url}/components`)).json().data,
  }
}

describe('step components', () => {
  test('saves components (an upsert keeping the version) and reads them back; no backup for a first save', async ({
    t,
    owner,
    stranger,
  }) => {
    const step = await stepOf(t, owner)
    expect((await funnelCall(t.app, owner, 'GET', `${step.url}/components`)).json()).toMatchObject({
      errno: 404,
      message: 'Components not found',
    })
    const forgotten = cacheProbe(t.app, step.funnelId)
    const document = builderDocument('hello', 2, '3.0')
    const response = await step.save(document)
    expect(response.statusCode).toBe(200)
    const saved = response.json()
    expect(saved).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: anId,
        step_id: step.stepId,
        funnel_id: step.funnelId,
        components: document,
        saved_at: expect.any(String),
      },
    })
    expect(forgotten()).toBe(true)
    expect(await step.current()).toEqual(saved.data)
    const again = (await step.save(builderDocument('changed', 1, '3.1'))).json().data
    expect(again).toMatchObject({ _id: saved.data._id, components: { version: '3.1' } })
    expect(await step.backups()).toHaveLength(1)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}${step.url}/components` },
      owner,
      stranger,
    )
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'POST', url: `${FUNNELS}${step.url}/components`, payload: { builderComponents: document } },
      owner,
      stranger,
    )
  })

  test('keeps a component field the builder adds, and validates the document', async ({ t, owner }) => {
    const step = await stepOf(t, owner)
    const document = {
      version: '1',
      components: [{ id: 'a', type: 'row', settings: {}, content: {}, children: [{ id: 'b' }] }],
    }
    expect((await step.save(document)).json().data.components).toEqual(document)
    const invalid = await step.save({ version: '1', components: [{ id: 'a', settings: {}, content: {} }] })
    expect(invalid.json()).toMatchObject({
      errno: 400,
      message: 'builderComponents.components[0].type is required',
    })
  })

  test('the checksum is SHA-256 of the canonical JSON: keys sorted, so key order does not matter', async ({
    t,
    owner,
  }) => {
    const step = await stepOf(t, owner)
    const saved = (await step.save({ version: '1', components: [] })).json().data
    expect(saved.checksum).toBe(sha256('{"components":[],"version":"1"}'))
    const document = builderDocument('same')
    await step.save(document)
    const reordered = {
      components: document.components.map(({ content, settings, type, id }) => ({
        content,
        settings,
        type,
        id,
      })),
      version: document.version,
    }
    await step.save(reordered)
    await step.save(document)
    // Only the first change (from the empty document) was backed up.
    const backups = await step.backups()
    expect(backups).toHaveLength(1)
    expect(backups[0].components_checksum).toBe(saved.checksum)
  })

  test('backs up the previous version first, lists backups newest first, reads one with its components', async ({
    t,
    owner,
    stranger,
  }) => {
    const step = await stepOf(t, owner)
    const checksums: string[] = []
    for (const text of ['v1', 'v2', 'v3'])
      checksums.push((await step.save(builderDocument(text))).json().data.checksum)
    const backups = await step.backups()
    expect(backups).toEqual([
      {
        _id: anId,
        step_id: step.stepId,
        funnel_id: step.funnelId,
        backup_date: expect.any(String),
        description: 'Before save',
        components_checksum: checksums[1],
      },
      expect.objectContaining({ components_checksum: checksums[0] }),
    ])
    expect(Date.parse(backups[0].backup_date)).toBeGreaterThan(Date.parse(backups[1].backup_date))
    const read = await funnelCall(t.app, owner, 'GET', `/rollback/${backups[1]._id}`)
    expect(read.json().data).toEqual({ ...backups[1], components: builderDocument('v1') })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}${step.url}/backups` },
      owner,
      stranger,
    )
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/rollback/${backups[1]._id}` },
      owner,
      stranger,
    )
  })

  test('keeps only the last 10 backups of a step after 25 saves', async ({ t, owner }) => {
    const step = await stepOf(t, owner)
    const checksums: string[] = []
    for (let n = 1; n <= 25; n++)
      checksums.push((await step.save(builderDocument(`save ${n}`))).json().data.checksum)
    const backups = await step.backups()
    expect(backups.map((b: { components_checksum: string }) => b.components_checksum)).toEqual(
      checksums.slice(14, 24).reverse(),
    )
  })

  test('keeps the cap of 10 under concurrent saves of one step', async ({ t, owner }) => {
    const step = await stepOf(t, owner)
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, n) => step.save(builderDocument(`concurrent ${n}`))),
    )
    expect(answers.map((a) => a.statusCode)).toEqual(Array(16).fill(200))
    const backups = await step.backups()
    expect(backups).toHaveLength(10)
    // Each backup is a version that was current before another save: never the last one saved.
    const current = (await step.current()).checksum
    expect(backups.map((b: { components_checksum: string }) => b.components_checksum)).not.toContain(current)
    expect(new Set(backups.map((b: { components_checksum: string }) => b.components_checksum)).size).toBe(10)
  })

  test('rollback restores a backup as the current components and backs up what it replaces', async ({
    t,
    owner,
    stranger,
  }) => {
    const step = await stepOf(t, owner)
    for (const text of ['old', 'new']) await step.save(builderDocument(text))
    const [oldBackup] = await step.backups()
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/rollback/${oldBackup._id}` },
      owner,
      stranger,
    )
    expect((await funnelCall(t.app, stranger, 'POST', `/rollback/${oldBackup._id}`)).statusCode).toBe(404)
    const replaced = (await step.current()).checksum
    const forgotten = cacheProbe(t.app, step.funnelId)
    const response = await funnelCall(t.app, owner, 'POST', `/rollback/${oldBackup._id}`)
    expect(response.statusCode).toBe(200)
    expect(response.json().data).toMatchObject({
      step_id: step.stepId,
      funnel_id: step.funnelId,
      components: builderDocument('old'),
      checksum: oldBackup.components_checksum,
    })
    expect(forgotten()).toBe(true)
    expect((await step.current()).components).toEqual(builderDocument('old'))
    const [newest, ...rest] = await step.backups()
    expect(newest).toMatchObject({
      components_checksum: replaced,
      description: `Before rollback to the backup of ${oldBackup.backup_date}`,
    })
    expect(rest.map((b: { _id: string }) => b._id)).toEqual([oldBackup._id])
  })

  test('answers 404 for components, backups and rollback of a soft-deleted funnel', async ({ t, owner }) => {
    const step = await stepOf(t, owner)
    for (const text of ['a', 'b']) await step.save(builderDocument(text))
    const [backup] = await step.backups()
    await softDeleteFunnel(t.app, step.funnelId)
    const calls: [Parameters<typeof funnelCall>[2], string, object?][] = [
      ['POST', `${step.url}/components`, { builderComponents: builderDocument('c') }],
      ['GET', `${step.url}/components`],
      ['GET', `${step.url}/backups`],
      ['GET', `/rollback/${backup._id}`],
      ['POST', `/rollback/${backup._id}`],
    ]
    for (const [method, path, payload] of calls) {
      const response = await funnelCall(t.app, owner, method, path, payload)
      expect(response.statusCode, `${method} ${path}`).toBe(404)
    }
  })

  test('answers the spec messages for a malformed or unknown funnel', async ({ t, owner }) => {
    const step = await stepOf(t, owner)
    const malformed = await funnelCall(t.app, owner, 'GET', `/xyz/steps/${step.stepId}/backups`)
    expect(malformed.json()).toMatchObject({ errno: 400, message: 'Invalid funnel ID' })
    const badBackup = await funnelCall(t.app, owner, 'GET', '/rollback/nope')
    expect(badBackup.json()).toMatchObject({
      errno: 400,
      message: 'rollback_id must be a 24-character hex id',
    })
  })
})
