import { type Static, Type } from '@sinclair/typebox'
import { MAX_REQUEST_BUDGET } from '../../platform/http/account-budget.js'
import { Id, Integer, Nullable } from '../../platform/http/schemas.js'

/** `PUT /v1/admin/accounts/:id/request-budget`: the account's own budget, or null for the service's default. */
export const RequestBudgetBody = Type.Object(
  {
    requests: Nullable(
      Integer({
        minimum: 1,
        maximum: MAX_REQUEST_BUDGET,
        description:
          'Requests the account may make in each budget window (ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS), across ' +
          "all instances; null gives it back the service's default (ACCOUNT_REQUEST_BUDGET)",
      }),
    ),
  },
  { title: 'RequestBudgetInput' },
)
export type RequestBudgetBody = Static<typeof RequestBudgetBody>

/** An account's request budget, as its requests are counted against it. */
export const RequestBudget = Type.Object(
  {
    account_id: Id(),
    requests: Nullable(
      Type.Integer({
        description: "The account's own budget per window; null when it has the service's default",
      }),
    ),
    effective_requests: Type.Integer({
      description:
        'The budget its requests count against: its own, or the default. Sent to clients as `q` in RateLimit-Policy',
    }),
    window_seconds: Type.Integer({
      description: 'The window, the same for every account (`w` in RateLimit-Policy)',
    }),
  },
  { title: 'RequestBudget' },
)
export type RequestBudget = Static<typeof RequestBudget>
