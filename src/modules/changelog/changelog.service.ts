import type { PostsPage } from './changelog.schemas.js'

/**
 * The changelog feed. The upstream changelog call is disabled by the spec, so the feed is always
 * empty while keeping the requested paging.
 */
export function listChangelogPosts(page: number, perPage: number): PostsPage {
  return { pagination: { page, per_page: perPage, total: 0 }, data: [] }
}
