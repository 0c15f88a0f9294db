/** Third-party apps need `reviews.read` to read the review settings and requests, `reviews.write` to change them. */
export const REVIEWS_READ = { oauthScope: 'reviews.read' } as const
export const REVIEWS_WRITE = { oauthScope: 'reviews.write' } as const
