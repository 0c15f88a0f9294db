import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { openSecret, sealSecret } from './secret-box.js'

describe('secret box', () => {
  const key = randomBytes(32)

  it('round-trips a secret without showing it', () => {
    const sealed = sealSecret(key, 'SG.secret-api-key')
    expect(sealed).toMatch(/^v1\./)
    expect(sealed).not.toContain('secret-api-key')
    expect(openSecret(key, sealed)).toBe('SG.secret-api-key')
    expect(sealSecret(key, 'SG.secret-api-key')).not.toBe(sealed)
  })

  it('refuses another key and an altered value', () => {
    const sealed = sealSecret(key, 'SG.secret-api-key')
    expect(() => openSecret(randomBytes(32), sealed)).toThrow()
    const parts = sealed.split('.')
    const altered = [...parts.slice(0, 3), Buffer.from('SG.other').toString('base64url')].join('.')
    expect(() => openSecret(key, altered)).toThrow()
    expect(() => openSecret(key, 'plain text')).toThrow('not a sealed secret')
  })
})
