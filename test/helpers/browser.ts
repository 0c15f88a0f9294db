import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Debian's chromium: CI installs it, and a browser is never downloaded. */
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
]

/** Headless Chromium for a browser test; a missing browser fails the file: these tests never skip. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`)
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
}
