import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createBrotliDecompress } from 'node:zlib'
import { type Browser, chromium } from 'playwright-core'

/**
 * The headless Chromium (Linux x64) that `npm install` brings: @sparticuz/chromium ships the browser itself,
 * Brotli-compressed, in the package, and it needs no library a bare Debian lacks (libnss3, libnspr4 and
 * libexpat1 are there). Only its binary is used, not its launcher, whose flags suit serverless machines
 * (web security off, one process).
 */
const PACKAGE = join(createRequire(import.meta.url).resolve('@sparticuz/chromium'), '../..')
const VERSION: string = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version
const CHROMIUM = join(PACKAGE, '../../.cache', `sparticuz-chromium-${VERSION}`, 'chromium')
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

/**
 * The browser unpacked once into node_modules/.cache (about 1 s). Unpacked under a name of its own and then
 * renamed into place, so that two test files starting together never run a half-written binary.
 */
async function unpackedChromium(): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM
  mkdirSync(join(CHROMIUM, '..'), { recursive: true })
  const partial = `${CHROMIUM}.${process.pid}`
  await pipeline(
    createReadStream(join(PACKAGE, 'bin/chromium.br')),
    createBrotliDecompress(),
    createWriteStream(partial, { mode: 0o755 }),
  )
  renameSync(partial, CHROMIUM)
  return CHROMIUM
}

/** Headless Chromium for a browser test; a browser that does not start fails the file: these tests never skip. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await unpackedChromium(), args: CHROMIUM_ARGS })
}
