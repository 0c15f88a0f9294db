/** Third-party apps need `reviews.read` to read the review settings and requests, `reviews.write` to change them. */
export const REVIEWS_READ = { oauthScope: 'reviews.read' } as const
export const REVIEWS_WRITE = { oauthScope: 'reviews.write' } as const

/** The spec's review configuration refusals, word for word. */
export const INVALID_TRIGGER_TYPE = 'Invalid trigger type'
export const DELAY_HOURS_MUST_BE_POSITIVE = 'Delay hours must be positive'
export const TEMPLATE_NOT_FOUND = 'Template not found'
