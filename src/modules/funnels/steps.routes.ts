import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { BUILDER_BODY_LIMIT } from './components.routes.js'
import { purgeEdgeTagsAfterWrite } from './edge-purge.js'
import { funnelRoute } from './funnel-access.routes.js'
import { FunnelParams, Succeeded } from './funnel-access.schemas.js'
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

/** The steps of a funnel under `/v1/funnels`: read, create, update, reorder, duplicate, settings, delete. */
export const stepsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps = {
    db,
    stepCache: stepCacheOf(platform),
    purgeAtEdge: (tags: string[]) => purgeEdgeTagsAfterWrite(platform.config.edge, tags, platform.log),
  }
  app.addHook('onRequest', app.authenticate)
  const denied = errorResponses(400, 401, 403, 404, 429)

  app.get(
    '/:id/steps/:step_id',
    funnelRoute('stepsRead', 'Read a step with its html, seo, tracking code and css', 'read', {
      params: StepParams,
      response: { 200: Envelope(Step), ...denied },
    }),
    async (request) =>
      ok(await getStep(db, request.auth.account_id, request.params.id, request.params.step_id)),
  )

  app.post(
    '/:id/steps',
    funnelRoute('stepsCreate', 'Add a step to a funnel (its path unique within the funnel)', 'write', {
      params: FunnelParams,
      body: CreateStepBody,
      response: { 201: Envelope(Step), ...denied, ...errorResponses(409) },
    }),
    async (request, reply) =>
      reply
        .status(201)
        .send(ok(await createStep(deps, request.auth.account_id, request.params.id, request.body))),
  )

  app.put(
    '/:id/steps/orders',
    funnelRoute('stepsReorder', "Set the order of a funnel's steps, in one bulk write", 'write', {
      params: FunnelParams,
      body: StepOrdersBody,
      response: { 200: Envelope(StepOrders), ...denied },
    }),
    async (request) => ok(await reorderSteps(deps, request.auth.account_id, request.params.id, request.body)),
  )

  app.put(
    '/:id/steps/:step_id',
    {
      bodyLimit: BUILDER_BODY_LIMIT,
      ...funnelRoute(
        'stepsUpdate',
        'Save a step from the builder: name, path, fonts and components (a backup is made)',
        'write',
        {
          params: StepParams,
          body: UpdateStepBody,
          response: { 200: Envelope(Step), ...denied, ...errorResponses(409, 413) },
        },
      ),
    },
    async (request) => {
      const { id, step_id } = request.params
      return ok(await updateStep(deps, request.auth.account_id, id, step_id, request.body))
    },
  )

  app.post(
    '/:id/steps/:step_id/duplicate',
    funnelRoute(
      'stepsDuplicate',
      "Copy a step (' (Copy)', components copied) after the funnel's last",
      'write',
      {
        params: StepParams,
        response: { 201: Envelope(Step), ...denied },
      },
    ),
    async (request, reply) => {
      const { id, step_id } = request.params
      return reply.status(201).send(ok(await duplicateStep(deps, request.auth.account_id, id, step_id)))
    },
  )

  app.put(
    '/steps/:step_id/settings',
    {
      bodyLimit: BUILDER_BODY_LIMIT,
      ...funnelRoute(
        'stepsSettings',
        "Change a step's page settings: details, seo, tracking code, css",
        'write',
        {
          params: StepIdParams,
          body: StepSettingsBody,
          response: { 200: Envelope(Step), ...denied, ...errorResponses(409, 413) },
        },
      ),
    },
    async (request) =>
      ok(await updateStepSettings(deps, request.auth.account_id, request.params.step_id, request.body)),
  )

  app.delete(
    '/:id/steps/:step_id',
    funnelRoute('stepsDelete', 'Delete a step for good, with its components and backups', 'write', {
      params: StepParams,
      response: { 200: Succeeded, ...denied },
    }),
    async (request) => {
      await deleteStep(deps, request.auth.account_id, request.params.id, request.params.step_id)
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
