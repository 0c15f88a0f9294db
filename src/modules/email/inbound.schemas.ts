import { Type } from '@sinclair/typebox'

export const Received = Type.Object({ success: Type.Literal(true), message: Type.Literal('SUCCESS') })
