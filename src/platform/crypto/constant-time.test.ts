import { describe, expect, it } from 'vitest'
import { isSameSecret } from './constant-time.js'

describe('isSameSecret', () => {
  it('matches equal secrets, as strings or bytes', () => {
    expect(isSameSecret('whsec_abc', 'whsec_abc')).toBe(true)
    expect(isSameSecret(Buffer.from('a1b2'), 'a1b2')).toBe(true)
  })

  it('refuses a different secret, one of another length, an empty one and one not sent', () => {
    expect(isSameSecret('whsec_abd', 'whsec_abc')).toBe(false)
    expect(isSameSecret('whsec_ab', 'whsec_abc')).toBe(false)
    expect(isSameSecret('whsec_abcd', 'whsec_abc')).toBe(false)
    expect(isSameSecret('', 'whsec_abc')).toBe(false)
    expect(isSameSecret(undefined, 'whsec_abc')).toBe(false)
  })
})
