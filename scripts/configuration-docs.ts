/**
 * Writes docs/configuration.md's tables anew from src/config-reference.ts (the text above them is kept):
 * `npx tsx scripts/configuration-docs.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { withGeneratedTables } from '../src/config-reference.js'

const page = new URL('../docs/configuration.md', import.meta.url)
writeFileSync(page, withGeneratedTables(readFileSync(page, 'utf8')))
