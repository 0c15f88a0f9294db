import { describe, expect, it } from 'vitest'
import { createStepCache } from './step-cache.js'

const cacheOf = (maxEntries: number, maxChars: number) =>
  createStepCache<string>({ maxEntries, maxChars, sizeOf: (value) => value.length, ttlMs: 60_000 })

describe('the step cache', () => {
  it('keeps at most maxEntries, dropping the least recently used first', () => {
    const cache = cacheOf(2, 1_000)
    cache.set('a', 'f1', 'A', cache.generation())
    cache.set('b', 'f1', 'B', cache.generation())
    expect(cache.get('a')).toBe('A')
    cache.set('c', 'f2', 'C', cache.generation())
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['A', undefined, 'C'])
  })

  it('keeps at most maxChars, and no entry larger than all of it', () => {
    const cache = cacheOf(100, 10)
    cache.set('a', 'f1', 'x'.repeat(6), cache.generation())
    cache.set('b', 'f1', 'y'.repeat(6), cache.generation())
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, 'yyyyyy'])
    cache.set('huge', 'f1', 'z'.repeat(11), cache.generation())
    expect(cache.get('huge')).toBeUndefined()
  })

  it("forgets all of a funnel's entries and only them", () => {
    const cache = cacheOf(100, 1_000)
    cache.set('a', 'f1', 'A', cache.generation())
    cache.set('b', 'f1', 'B', cache.generation())
    cache.set('c', 'f2', 'C', cache.generation())
    cache.forgetFunnel('f1')
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, undefined, 'C'])
  })

  it('does not keep a value read before a forget (a write committed during the read)', () => {
    const cache = cacheOf(100, 1_000)
    const generation = cache.generation()
    cache.forgetFunnel('f1')
    cache.set('a', 'f1', 'read before the write', generation)
    expect(cache.get('a')).toBeUndefined()
    cache.set('a', 'f1', 'read after', cache.generation())
    expect(cache.get('a')).toBe('read after')
  })
})
