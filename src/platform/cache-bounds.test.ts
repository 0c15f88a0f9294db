import { LRUCache } from 'lru-cache'
import { describe, expect, it } from 'vitest'
import { upToEntries } from './cache-bounds.js'

describe('upToEntries', () => {
  it('keeps at most that many entries, the least recently used going first', () => {
    const cache = new LRUCache<string, number>({ ...upToEntries(3), ttl: 60_000 })
    for (const [index, key] of ['a', 'b', 'c'].entries()) cache.set(key, index)
    cache.get('a')
    cache.set('d', 3)
    cache.set('e', 4)
    expect([...cache.keys()].sort()).toEqual(['a', 'd', 'e'])
    expect(cache.size).toBe(3)
  })
})
