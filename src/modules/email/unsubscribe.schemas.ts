import { Type } from '@sinclair/typebox'

export const UnsubscribeQuery = Type.Object({ token: Type.String({ minLength: 10, maxLength: 2000 }) })

export const Unsubscribed = Type.Object({ unsubscribed: Type.Boolean() }, { title: 'Unsubscribed' })
