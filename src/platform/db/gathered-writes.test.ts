import { describe, expect, it } from 'vitest'
import { gatherWrites } from './gathered-writes.js'

/** A write that finishes when the test says, recording what each write carried. */
function controlledWrites() {
  const writes: { items: number[]; finish: (error?: Error) => void }[] = []
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      writes.push({ items, finish: (error) => (error ? reject(error) : resolve()) })
    })
  return { writes, write }
}

describe('gathered writes', () => {
  it('writes a lone call at once, and gathers the calls that arrive while writes run', async () => {
    const { writes, write } = controlledWrites()
    const gathered = gatherWrites(write, { maxInFlight: 1, maxItems: 10 })
    const first = gathered(1)
    expect(writes.map((w) => w.items)).toEqual([[1]])
    const later = [gathered(2), gathered(3), gathered(4)]
    expect(writes).toHaveLength(1)
    writes[0]?.finish()
    await first
    expect(writes.map((w) => w.items)).toEqual([[1], [2, 3, 4]])
    writes[1]?.finish()
    await Promise.all(later)
  })

  it('runs up to maxInFlight writes at once, each of at most maxItems calls', async () => {
    const { writes, write } = controlledWrites()
    const gathered = gatherWrites(write, { maxInFlight: 2, maxItems: 2 })
    const calls = [1, 2, 3, 4, 5, 6].map((n) => gathered(n))
    expect(writes.map((w) => w.items)).toEqual([[1], [2]])
    writes[0]?.finish()
    writes[1]?.finish()
    await Promise.all(calls.slice(0, 2))
    expect(writes.map((w) => w.items)).toEqual([[1], [2], [3, 4], [5, 6]])
    for (const w of writes.slice(2)) w.finish()
    await Promise.all(calls)
  })

  it('rejects every call of a failed write, and no call of another', async () => {
    const { writes, write } = controlledWrites()
    const gathered = gatherWrites(write, { maxInFlight: 1, maxItems: 10 })
    const first = gathered(1)
    const failing = [gathered(2), gathered(3)]
    writes[0]?.finish()
    await first
    writes[1]?.finish(new Error('disk full'))
    for (const call of failing) await expect(call).rejects.toThrow('disk full')
    const after = gathered(4)
    writes[2]?.finish()
    await expect(after).resolves.toBeUndefined()
  })
})
