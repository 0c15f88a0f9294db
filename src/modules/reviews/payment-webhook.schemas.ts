import { type Static, Type } from '@sinclair/typebox'

/**
 * A Stripe event (`charge.succeeded`, `payment_intent.succeeded`, `charge.refunded`, `refund.created`), or the
 * spec's bare charge object. Read from the raw body once its signature is verified.
 */
export const StripePostBody = Type.Object(
  {
    id: Type.String(),
    object: Type.Optional(Type.String({ description: '`event`, or `charge` for a bare charge' })),
    type: Type.Optional(Type.String()),
    data: Type.Optional(Type.Object({ object: Type.Object({}) })),
    amount: Type.Optional(Type.Integer({ description: 'Minor units' })),
    currency: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    metadata: Type.Optional(
      Type.Object({
        account_id: Type.Optional(Type.String()),
        order_id: Type.Optional(Type.String()),
        customer_email: Type.Optional(Type.String()),
        customer_phone: Type.Optional(Type.String()),
      }),
    ),
  },
  { title: 'StripeChargeEvent', description: 'Signed: header Stripe-Signature (STRIPE_WEBHOOK_SECRET)' },
)

/** The spec's bare charge object, as the reference's example of a payment post (ids made up). */
export const CHARGE_EXAMPLE = {
  id: 'ch_3OqZ2aExample0001',
  object: 'charge',
  amount: 4999,
  currency: 'usd',
  status: 'succeeded',
  metadata: {
    account_id: '65f1c0ffee0000000000a001',
    order_id: 'order-1042',
    customer_email: 'ada@example.com',
  },
} satisfies Static<typeof StripePostBody>
