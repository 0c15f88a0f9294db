/** Whether the database refused a write with `sqlState`, wrapped by Drizzle or not, for `constraint` if given. */
function isViolation(error: unknown, sqlState: string, constraint: string | undefined): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    const { code, constraint: violated } = e as { code?: unknown; constraint?: unknown }
    if (code === sqlState) return constraint === undefined || violated === constraint
  }
  return false
}

/**
 * Whether the database refused a write for a unique index (SQLSTATE 23505), wrapped by Drizzle or not;
 * with `constraint`, only for that index (PostgreSQL and PGlite both name it on the error).
 */
export const isUniqueViolation = (error: unknown, constraint?: string) =>
  isViolation(error, '23505', constraint)

/** Whether a write broke a foreign key (SQLSTATE 23503): a row still referenced, or a reference to none. */
export const isForeignKeyViolation = (error: unknown, constraint?: string) =>
  isViolation(error, '23503', constraint)
