/**
 * lru-cache's bound on the number of entries, without its preallocation. Given `max`, lru-cache allocates
 * every slot at construction: the 100,000 slots of the revoked grants held 4 MB from the first second,
 * nearly all empty. Counted as `maxSize` at one per entry, the same bound holds and the cache grows as
 * entries come.
 */
export function upToEntries(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: () => 1 }
}
