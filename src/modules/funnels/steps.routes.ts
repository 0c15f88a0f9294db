import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Acknowledged, Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { BUILDER_BODY_LIMIT } from './components.routes.js'
import { purgeEdgeTagsAfterWrite } from './edge-purge.js'
import { FunnelParams } from './funnel-access.schemas.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'
import {
  CreateStepBody,
  Step,
  StepIdParams,
  StepOrders,
  StepOrdersBody,
  StepParams,
  StepSettingsBody,
  UpdateStepBody,
} from './steps.schemas.js'
import {
  createStep,
  deleteStep,
  duplicateStep,
  getStep,
  reorderSteps,
  updateStep,
  updateStepSettings,
} from './steps.service.js'

/** What every step route may answer: a bad id, no token, no scope, no such funnel or step, the rate limit. */
const STEP_ERRORS = [400, 401, 403, 404, 429] as const

/** The steps of a funnel under `/v1/funnels`: read, create, update, reorder, duplicate, settings, delete. */
export const stepsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps = {
    db,
    stepCache: stepCacheOf(platform),
    purgeAtEdge: (tags: string[]) => purgeEdgeTagsAfterWrite(platform.config.edge, tags, platform.log),
  }
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/:id/steps/:step_id',
    routeOptions({
      operationId: 'stepsRead',
      summary: 'Read a step with its html, seo, tracking code and css',
      description:
        "One step of the caller's funnel with its `html`, `seo`, `tracking_code`, `css` and `funnel_id`. " +
        "404 `Funnel not found` or `Step not found` when either is unknown, deleted or another account's.",
      tags: ['funnels'],
      access: SITES_READ,
      params: StepParams,
      response: { 200: Envelope(Step) },
      errors: STEP_ERRORS,
    }),
    async (request) =>
      ok(await getStep(db, request.auth.account_id, request.params.id, request.params.step_id)),
  )

  app.post(
    '/:id/steps',
    routeOptions({
      operationId: 'stepsCreate',
      summary: 'Add a step to a funnel (its path unique within the funnel)',
      description:
        'Adds a step `stepInfo` {name, path, type, order} to the funnel; without an `order` it goes after ' +
        'the last step, and `type` is `page` unless given. A path another step of the funnel holds answers ' +
        '409 `Path already in use` naming `conflicting_step`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      body: CreateStepBody,
      response: { 201: Envelope(Step) },
      errors: [...STEP_ERRORS, 409],
      answers: { 409: '`Path already in use` by another step of the funnel' },
    }),
    async (request, reply) =>
      reply
        .status(201)
        .send(ok(await createStep(deps, request.auth.account_id, request.params.id, request.body))),
  )

  app.put(
    '/:id/steps/orders',
    routeOptions({
      operationId: 'stepsReorder',
      summary: "Set the order of a funnel's steps, in one bulk write",
      description:
        "Sets the `order` of each listed step in one bulk write and answers the funnel's steps `{ _id, " +
        'name, order }`. Every `step_id` must be a step of this funnel and appear once (400 naming the ' +
        'entry otherwise).',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      body: StepOrdersBody,
      response: { 200: Envelope(StepOrders) },
      errors: STEP_ERRORS,
    }),
    async (request) => ok(await reorderSteps(deps, request.auth.account_id, request.params.id, request.body)),
  )

  app.put(
    '/:id/steps/:step_id',
    {
      bodyLimit: BUILDER_BODY_LIMIT,
      ...routeOptions({
        operationId: 'stepsUpdate',
        summary: 'Save a step from the builder: name, path, fonts and components (a backup is made)',
        description:
          "The builder's save of a step: its name and path (`stepInfo`), its `builderComponents` and " +
          '`externalFonts`. The components it replaces are backed up first (the last 10 backups of a step ' +
          "are kept), and the step's cached page is purged, here and at the edge. Bodies up to 5 MB (413 " +
          'beyond); a path another step of the funnel holds answers 409 `Path already in use`.',
        tags: ['funnels'],
        access: SITES_WRITE,
        params: StepParams,
        body: UpdateStepBody,
        response: { 200: Envelope(Step) },
        errors: [...STEP_ERRORS, 409, 413],
        answers: { 409: '`Path already in use` by another step of the funnel', 413: 'The body is over 5 MB' },
      }),
    },
    async (request) => {
      const { id, step_id } = request.params
      return ok(await updateStep(deps, request.auth.account_id, id, step_id, request.body))
    },
  )

  app.post(
    '/:id/steps/:step_id/duplicate',
    routeOptions({
      operationId: 'stepsDuplicate',
      summary: "Copy a step (' (Copy)', components copied) after the funnel's last",
      description:
        "Copies the step as `<name> (Copy)` with its builder components, placed after the funnel's last " +
        'step.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: StepParams,
      response: { 201: Envelope(Step) },
      errors: STEP_ERRORS,
    }),
    async (request, reply) => {
      const { id, step_id } = request.params
      return reply.status(201).send(ok(await duplicateStep(deps, request.auth.account_id, id, step_id)))
    },
  )

  app.put(
    '/steps/:step_id/settings',
    {
      bodyLimit: BUILDER_BODY_LIMIT,
      ...routeOptions({
        operationId: 'stepsSettings',
        summary: "Change a step's page settings: details, seo, tracking code, css",
        description:
          'Changes the page settings of a step, named by its id alone: `details` {name, path}, `seo` ' +
          '{title, description, keywords, image, robots, canonical}, `tracking_code` {header, footer} and ' +
          '`css`. A path another step of its funnel holds answers 409 `Path already in use`; 404 `Step not ' +
          'found` for a step of no live funnel of the account.',
        tags: ['funnels'],
        access: SITES_WRITE,
        params: StepIdParams,
        body: StepSettingsBody,
        response: { 200: Envelope(Step) },
        errors: [...STEP_ERRORS, 409, 413],
        answers: { 409: '`Path already in use` by another step of the funnel', 413: 'The body is over 5 MB' },
      }),
    },
    async (request) =>
      ok(await updateStepSettings(deps, request.auth.account_id, request.params.step_id, request.body)),
  )

  app.delete(
    '/:id/steps/:step_id',
    routeOptions({
      operationId: 'stepsDelete',
      summary: 'Delete a step for good, with its components and backups',
      description:
        "Deletes the step for good, with its builder components and backups, and renumbers the funnel's " +
        "other steps from 0. Answers `{ success: true, message: 'SUCCESS' }`.",
      tags: ['funnels'],
      access: SITES_WRITE,
      params: StepParams,
      response: { 200: Acknowledged },
      errors: STEP_ERRORS,
    }),
    async (request) => {
      await deleteStep(deps, request.auth.account_id, request.params.id, request.params.step_id)
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
