import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import {
  COMPONENTS_INPUT_EXAMPLE,
  RollbackParams,
  SaveComponentsBody,
  STEP_COMPONENTS_EXAMPLE,
  StepBackup,
  StepBackupWithComponents,
  StepComponents,
} from './components.schemas.js'
import { getBackup, getBackups, getComponents, restoreBackup, saveComponents } from './components.service.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'
import { StepParams } from './steps.schemas.js'

/** Builder documents run larger than the service's 1 MB default body (the edge's HTML limit). */
export const BUILDER_BODY_LIMIT = 5 * 1_048_576

/** A step's builder components, their backups, and rollback to one, under `/v1/funnels`. */
export const componentsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps = { db, stepCache: stepCacheOf(platform) }
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/:id/steps/:step_id/components',
    {
      bodyLimit: BUILDER_BODY_LIMIT,
      ...routeOptions({
        operationId: 'componentsSave',
        summary: "Save a step's builder components (the previous version is backed up first)",
        description:
          "Upserts the step's builder components `{ version, components: [{ id, type, settings, content " +
          '}] }` and answers `{ _id, step_id, funnel_id, components, checksum, saved_at }`. The version it ' +
          'replaces is backed up first unless it is the same document; backups beyond the newest 10 go, ' +
          'and saves of one step run one at a time. Bodies up to 5 MB (413 beyond).',
        tags: ['funnels'],
        access: SITES_WRITE,
        params: StepParams,
        body: SaveComponentsBody,
        response: { 200: Envelope(StepComponents) },
        example: { body: COMPONENTS_INPUT_EXAMPLE, response: ok(STEP_COMPONENTS_EXAMPLE) },
        errors: [400, 401, 403, 404, 413, 429],
        answers: { 413: 'The body is over 5 MB' },
      }),
    },
    async (request) => {
      const { id, step_id } = request.params
      const { builderComponents } = request.body
      return ok(await saveComponents(deps, request.auth.account_id, id, step_id, builderComponents))
    },
  )

  app.get(
    '/:id/steps/:step_id/components',
    routeOptions({
      operationId: 'componentsRead',
      summary: "Read a step's builder components",
      description:
        "The step's current builder components with their `checksum` (SHA-256 of the canonical JSON) and " +
        '`saved_at`; 404 `Components not found` when the step was never saved.',
      tags: ['funnels'],
      access: SITES_READ,
      params: StepParams,
      response: { 200: Envelope(StepComponents) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Funnel not found`, `Step not found`, or `Components not found` (never saved)' },
    }),
    async (request) =>
      ok(await getComponents(db, request.auth.account_id, request.params.id, request.params.step_id)),
  )

  app.get(
    '/:id/steps/:step_id/backups',
    routeOptions({
      operationId: 'componentsBackups',
      summary: "List a step's component backups, newest first",
      description:
        "The step's backups `{ _id, step_id, funnel_id, backup_date, description, components_checksum }`, " +
        'newest first, without their components; the last 10 of a step are kept.',
      tags: ['funnels'],
      access: SITES_READ,
      params: StepParams,
      response: { 200: Envelope(Type.Array(StepBackup)) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request) =>
      ok(await getBackups(db, request.auth.account_id, request.params.id, request.params.step_id)),
  )

  app.get(
    '/rollback/:rollback_id',
    routeOptions({
      operationId: 'componentsBackupRead',
      summary: 'Read a backup with its full components',
      description:
        'One backup of a step of the account, by its id, with its full `components`: what `POST ' +
        '/rollback/{rollback_id}` would restore. 404 `Backup not found` otherwise.',
      tags: ['funnels'],
      access: SITES_READ,
      params: RollbackParams,
      response: { 200: Envelope(StepBackupWithComponents) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Backup not found`' },
    }),
    async (request) => ok(await getBackup(db, request.auth.account_id, request.params.rollback_id)),
  )

  app.post(
    '/rollback/:rollback_id',
    routeOptions({
      operationId: 'componentsRollback',
      summary: "Restore a backup as its step's components (what it replaces is backed up first)",
      description:
        "Makes the backup its step's current components, saved like any save: what it replaces is backed " +
        'up first. The backup itself stays until the cap of 10 backups pushes it out.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: RollbackParams,
      response: { 200: Envelope(StepComponents) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Backup not found`' },
    }),
    async (request) => ok(await restoreBackup(deps, request.auth.account_id, request.params.rollback_id)),
  )
}
