import { type Static, Type } from '@sinclair/typebox'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { REVIEW_PLATFORMS } from './documents.schemas.js'

/** Where the account's customers leave a review on one platform (the tracked link leads there). */
export const ReviewLink = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    platform: StringEnum(REVIEW_PLATFORMS),
    url: Type.String(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'ReviewLink' },
)
export type ReviewLink = Static<typeof ReviewLink>

const Url = Type.String({ format: 'uri', maxLength: 2000, description: 'An http or https URL' })

export const CreateBody = Type.Object(
  { platform: StringEnum(REVIEW_PLATFORMS), url: Url },
  { title: 'ReviewLinkInput', additionalProperties: false },
)
export type CreateBody = Static<typeof CreateBody>

export const UpdateBody = Type.Object(
  { url: Url },
  { title: 'ReviewLinkUpdate', additionalProperties: false },
)
