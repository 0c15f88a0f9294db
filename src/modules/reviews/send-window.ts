import { MINUTE_MS } from '../../platform/time.js'
import type { SendWindow } from './documents.schemas.js'

const DAY_MINUTES = 24 * 60

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5))

/** The wall-clock minute of the day at `now` in `timeZone`. */
function localMinute(now: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now)
  const value = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0)
  return value('hour') * 60 + value('minute')
}

/**
 * When a send due at `now` may go out: `null` when `now` is inside the window (or there is none), else the
 * window's next opening in its time zone. A window whose end is before its start spans midnight; one whose
 * start equals its end is open all day.
 */
export function nextSendWindowOpening(now: Date, window: SendWindow | null, timeZone: string): Date | null {
  if (!window) return null
  const start = minutesOf(window.start)
  const end = minutesOf(window.end)
  if (start === end) return null
  const minute = localMinute(now, timeZone)
  const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end
  if (inside) return null
  const wait = (start - minute + DAY_MINUTES) % DAY_MINUTES
  const opening = new Date(now.getTime() + wait * MINUTE_MS)
  opening.setUTCSeconds(0, 0)
  return opening
}
