/** Whether the database refused a write for a unique index (SQLSTATE 23505), wrapped by Drizzle or not. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === '23505') return true
  }
  return false
}
