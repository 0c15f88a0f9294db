import { Type } from '@sinclair/typebox'

const Money = Type.Object({
  amount: Type.Optional(Type.Integer({ description: 'Smallest unit of currency' })),
  currency: Type.Optional(Type.String()),
})

/**
 * A Square event (`order.created`, `order.updated`): Square's `data.object.order_created` /
 * `order_updated`, or the spec's `data.object.order`. Read from the raw body once its signature is verified.
 */
export const SquarePostBody = Type.Object(
  {
    merchant_id: Type.Optional(Type.String()),
    type: Type.String(),
    event_id: Type.String(),
    created_at: Type.Optional(Type.String()),
    data: Type.Object({
      type: Type.Optional(Type.String()),
      id: Type.Optional(Type.String({ description: 'The order id' })),
      object: Type.Optional(
        Type.Object({
          order: Type.Optional(
            Type.Object({
              id: Type.Optional(Type.String()),
              location_id: Type.Optional(Type.String()),
              customer_id: Type.Optional(Type.String()),
              state: Type.Optional(Type.String()),
              total_money: Type.Optional(Money),
            }),
          ),
          order_created: Type.Optional(Type.Object({})),
          order_updated: Type.Optional(Type.Object({})),
        }),
      ),
    }),
  },
  {
    title: 'SquareOrderEvent',
    description:
      'Signed: header x-square-hmacsha256-signature (or x-orderprovider-signature), the base64 HMAC-SHA256 ' +
      'with SQUARE_WEBHOOK_SIGNATURE_KEY over SQUARE_WEBHOOK_URL followed by the raw body',
  },
)
