import { type Static, Type } from '@sinclair/typebox'

export const Scope = Type.Object(
  {
    scope: Type.String(),
    description: Type.String(),
    category: Type.String(),
  },
  { title: 'Scope' },
)
export type Scope = Static<typeof Scope>

/**
 * The scopes the migration seeds (drizzle/0007_oauth_apps.sql) with their descriptions, for the OpenAPI
 * document's `oauth2` scheme; scopes.test.ts holds them equal to the table.
 */
export const SEEDED_SCOPES: Record<string, string> = {
  'crm.contacts.read': 'See your contacts',
  'crm.contacts.write': 'Create and change your contacts',
  'crm.deals.read': 'See your deals',
  'crm.deals.write': 'Create and change your deals',
  'billing.read': 'See your billing details and invoices',
  'projects.tasks.read': 'See your project tasks',
  'analytics.read': 'See your analytics and reports',
  'sites.read': 'See your sites and funnels',
  'sites.write': 'Create and change your sites and funnels',
  'reviews.read': 'See your review requests and their settings',
  'reviews.write': 'Change how and when your customers are asked for reviews',
  'leads.read': 'See your ad lead campaigns and the leads they captured',
  'leads.write': 'Change your ad lead campaigns and your lead ads connection',
}
