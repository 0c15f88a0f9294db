import { isbot } from 'isbot'

/** A visit without a user agent, or with a crawler's or link previewer's, is a bot's: it counts no click. */
export const isBotVisit = (userAgent: string | undefined): boolean => !userAgent || isbot(userAgent)
