import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { BUILDER_BODY_LIMIT } from './components.routes.js'
import { purgeEdgeTagsAfterWrite } from './edge-purge.js'
import { FunnelParams, Succeeded } from './funnel-access.schemas.js'
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
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      body: CreateStepBody,
      response: { 201: Envelope(Step) },
      errors: [...STEP_ERRORS, 409],
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
        tags: ['funnels'],
        access: SITES_WRITE,
        params: StepParams,
        body: UpdateStepBody,
        response: { 200: Envelope(Step) },
        errors: [...STEP_ERRORS, 409, 413],
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
        tags: ['funnels'],
        access: SITES_WRITE,
        params: StepIdParams,
        body: StepSettingsBody,
        response: { 200: Envelope(Step) },
        errors: [...STEP_ERRORS, 409, 413],
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
      tags: ['funnels'],
      access: SITES_WRITE,
      params: StepParams,
      response: { 200: Succeeded },
      errors: STEP_ERRORS,
    }),
    async (request) => {
      await deleteStep(deps, request.auth.account_id, request.params.id, request.params.step_id)
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
