export interface ChangelogPage {
  pagination: { page: number; per_page: number; total: number }
  data: unknown[]
}

/**
 * The changelog feed. The upstream changelog call is disabled by the spec, so the feed is always
 * empty while keeping the requested paging.
 */
export function listChangelogPosts(page: number, perPage: number): ChangelogPage {
  return { pagination: { page, per_page: perPage, total: 0 }, data: [] }
}
