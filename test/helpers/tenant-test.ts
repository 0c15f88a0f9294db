import { test as base } from 'vitest'
import { startFakeGraphApi } from '../fakes/graph-api.js'
import { startFakeListingsApi } from '../fakes/listings-api.js'
import { type FakeSendgridOptions, startFakeSendgrid } from '../fakes/sendgrid.js'
import { startFakeSocketService } from '../fakes/socket-service.js'
import { buildTestApp, type TestAppOptions } from './app.js'
import { createTenant } from './fixtures.js'
import { LEADS_APP } from './leads.js'
import { registerApp } from './oauth.js'

/**
 * `test` with the fixtures most files need, set up once per file: `t`, the whole service on the file's
 * own database; `owner`, an account with a user and a platform token; `stranger`, another such account,
 * for isolation checks; `bystander`, a third; `subAccount`, an account whose parent is `owner` (an
 * agency's client); `oauthApp`, an active OAuth app with registerApp's defaults (redirect URI, scopes),
 * for files that go through the authorization flow. A file that needs other settings sets `appEnv` first:
 * `test.override('appEnv', { MAIL_PROVIDER: 'sendgrid' })` at its top.
 *
 * A file that talks to SendGrid sets `sendgridOptions` and takes the fake's address into its environment:
 * `test.override('appEnv', ({ sendgrid }) => ({ SENDGRID_BASE_URL: sendgrid.url, … }))`; `sendgrid` is
 * the fake, started once for the file. A file that talks to the listings API does the same with
 * `listingsApiOptions` and `listingsApi`.
 *
 * A file that talks to Meta's Graph API takes `graph`, the fake started once for the file with LEADS_APP's
 * app: `test.override('appEnv', ({ graph }) => leadsEnv(graph.url))`.
 *
 * A file that checks what the service emits takes the fake conversation socket service into its environment:
 * `test.override('appEnv', ({ socketService }) => ({ CONVERSATION_SOCKET_URL: socketService.url }))`.
 *
 * A file that reads the app's log sets `appOptions`: `const logs = captureLogs()`, then
 * `test.override('appOptions', { logStream: logs.stream })`.
 *
 * Suite hooks receive them too: `test.beforeAll(async ({ t, owner }) => …)`.
 */
export const test = base
  .extend('sendgridOptions', { scope: 'file' }, { apiKeys: [] } as FakeSendgridOptions)
  .extend('sendgrid', { scope: 'file' }, async ({ sendgridOptions }, { onCleanup }) => {
    const sendgrid = await startFakeSendgrid(sendgridOptions)
    onCleanup(() => sendgrid.close())
    return sendgrid
  })
  .extend('listingsApiOptions', { scope: 'file' }, { apiKey: '' } as Parameters<
    typeof startFakeListingsApi
  >[0])
  .extend('listingsApi', { scope: 'file' }, async ({ listingsApiOptions }, { onCleanup }) => {
    const listingsApi = await startFakeListingsApi(listingsApiOptions)
    onCleanup(() => listingsApi.close())
    return listingsApi
  })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend('graph', { scope: 'file' }, async ({}, { onCleanup }) => {
    const graph = await startFakeGraphApi({ appId: LEADS_APP.appId, appSecret: LEADS_APP.appSecret })
    onCleanup(() => graph.close())
    return graph
  })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend('socketService', { scope: 'file' }, async ({}, { onCleanup }) => {
    const socketService = await startFakeSocketService()
    onCleanup(() => socketService.close())
    return socketService
  })
  .extend('appEnv', { scope: 'file' }, {} as Record<string, string>)
  .extend('appOptions', { scope: 'file' }, {} as TestAppOptions)
  .extend('t', { scope: 'file' }, async ({ appEnv, appOptions }, { onCleanup }) => {
    const t = await buildTestApp(appEnv, appOptions)
    onCleanup(() => t.close())
    return t
  })
  .extend('owner', { scope: 'file' }, async ({ t }) => createTenant(t.app, { name: 'Owner' }))
  .extend('stranger', { scope: 'file' }, async ({ t }) => createTenant(t.app, { name: 'Stranger' }))
  .extend('bystander', { scope: 'file' }, async ({ t }) => createTenant(t.app, { name: 'Bystander' }))
  .extend('subAccount', { scope: 'file' }, async ({ t, owner }) =>
    createTenant(t.app, { name: 'Sub-account', parent_account: owner.accountId }),
  )
  .extend('oauthApp', { scope: 'file' }, async ({ t }) => registerApp(t.app))
