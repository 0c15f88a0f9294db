/** An ILIKE pattern matching `search` anywhere, with LIKE's wildcards in it taken literally. */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
