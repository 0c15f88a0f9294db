import { describe, expect, test } from 'vitest'
import { nextSendWindowOpening } from './send-window.js'

const at = (iso: string) => new Date(iso)

describe('send window', () => {
  test('sends at once without a window, inside it, or when it is open all day', () => {
    expect(nextSendWindowOpening(at('2026-06-01T03:00:00Z'), null, 'UTC')).toBeNull()
    expect(
      nextSendWindowOpening(at('2026-06-01T10:30:00Z'), { start: '09:00', end: '20:00' }, 'UTC'),
    ).toBeNull()
    expect(
      nextSendWindowOpening(at('2026-06-01T03:00:00Z'), { start: '09:00', end: '09:00' }, 'UTC'),
    ).toBeNull()
  })

  test('waits for the next opening in the time zone of the configuration', () => {
    const window = { start: '09:00', end: '20:00' }
    // 21:15 in Paris (UTC+2 in June): tomorrow 09:00 Paris, 07:00 UTC.
    expect(nextSendWindowOpening(at('2026-06-01T19:15:00Z'), window, 'Europe/Paris')).toEqual(
      at('2026-06-02T07:00:00Z'),
    )
    // 06:00 in New York (UTC-4): 09:00 the same day, 13:00 UTC.
    expect(nextSendWindowOpening(at('2026-06-01T10:00:00Z'), window, 'America/New_York')).toEqual(
      at('2026-06-01T13:00:00Z'),
    )
  })

  test('a window spanning midnight is open late and early', () => {
    const night = { start: '22:00', end: '02:00' }
    expect(nextSendWindowOpening(at('2026-06-01T23:00:00Z'), night, 'UTC')).toBeNull()
    expect(nextSendWindowOpening(at('2026-06-01T01:00:00Z'), night, 'UTC')).toBeNull()
    expect(nextSendWindowOpening(at('2026-06-01T12:00:00Z'), night, 'UTC')).toEqual(
      at('2026-06-01T22:00:00Z'),
    )
  })
})
