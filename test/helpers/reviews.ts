import type { TestApp } from './app.js'
import type { Tenant } from './fixtures.js'

/** `PUT /reviews/auto-review-request` as the tenant. */
export const putConfiguration = (t: TestApp, tenant: Tenant, payload: object, prefix = '/reviews') =>
  t.app.inject({ method: 'PUT', url: `${prefix}/auto-review-request`, headers: tenant.headers, payload })

/** A template of the tenant's, created through the API; its id. */
export async function createReviewTemplate(
  t: TestApp,
  tenant: Tenant,
  payload: object = {},
): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/templates',
    headers: tenant.headers,
    payload: {
      name: 'Thanks',
      channel: 'email',
      subject: 'Thanks, {{customer.name}}',
      body: '{{review.link}}',
      ...payload,
    },
  })
  if (response.statusCode !== 201)
    throw new Error(`template answered ${response.statusCode}: ${response.body}`)
  return response.json().data._id
}

/** The tenant's review URL for a platform, set through the API. */
export async function setReviewLink(
  t: TestApp,
  tenant: Tenant,
  platform: string,
  url: string,
): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/links',
    headers: tenant.headers,
    payload: { platform, url },
  })
  if (response.statusCode !== 201) throw new Error(`link answered ${response.statusCode}: ${response.body}`)
  return response.json().data._id
}
