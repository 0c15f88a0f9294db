/**
 * Whether the database refused a write for a unique index (SQLSTATE 23505), wrapped by Drizzle or not;
 * with `constraint`, only for that index (PostgreSQL and PGlite both name it on the error).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    const { code, constraint: violated } = e as { code?: unknown; constraint?: unknown }
    if (code === '23505') return constraint === undefined || violated === constraint
  }
  return false
}
