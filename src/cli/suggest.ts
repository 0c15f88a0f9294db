/** Edits (insert, delete, replace one character) turning `a` into `b`: Levenshtein's distance. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const replace = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min(replace, (previous[j] as number) + 1, (current[j - 1] as number) + 1)
    }
    previous = current
  }
  return previous[b.length] as number
}

/**
 * The candidate `typed` is most likely a typing slip of: at most two edits away, and fewer than a third
 * of its length (a short word two edits away is another word). Undefined when none is that close.
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; edits: number } | undefined
  for (const candidate of candidates) {
    const edits = distance(typed, candidate)
    if (edits <= 2 && edits * 3 < candidate.length && (!best || edits < best.edits))
      best = { candidate, edits }
  }
  return best?.candidate
}
