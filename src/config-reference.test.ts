import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'
import { CONFIG_REFERENCE, type VariableSection, withGeneratedTables } from './config-reference.js'

const readText = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')

/** Upper-case names as config.ts and the CLI read them: `env.NAME` or a helper given `(env, 'NAME'`. */
function variablesRead(): string[] {
  const code = `${readText('./config.ts')}\n${readText('./cli/admin-client.ts')}`
  const names = [...code.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map(
    (match) => match[1] ?? match[2] ?? '',
  )
  return [...new Set(names)].sort()
}

const documented = (sections: VariableSection[]) =>
  sections.flatMap((section) => section.variables.map((variable) => variable.name))

/**
 * The variables whose documented default is not what loadConfig takes when they are unset: set to it, the
 * configuration comes out different. S3 and tracing are on, so that their settings are read too; DATA_DIR is a
 * directory of the test's (the default would write secrets into the checkout's ./data).
 */
function defaultsThatDiffer(sections: VariableSection[]): string[] {
  const base = { DATA_DIR: mkdtempSync(join(tmpdir(), 'config-reference-')), S3_BUCKET: 'bucket' }
  const withTracing = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }
  const unset = [loadConfig(base), loadConfig(withTracing)]
  return sections
    .flatMap((section) => section.variables)
    .filter(({ name, default: value }) => {
      if (value === undefined || name in base) return false
      const set = [loadConfig({ ...base, [name]: value }), loadConfig({ ...withTracing, [name]: value })]
      return JSON.stringify(set) !== JSON.stringify(unset)
    })
    .map(({ name }) => name)
}

describe('the configuration reference', () => {
  it('names every variable config.ts and the CLI read, each once', () => {
    const names = documented(CONFIG_REFERENCE)
    expect(variablesRead()).toContain('DATABASE_URL')
    expect([...names].sort()).toEqual(variablesRead())
    expect(new Set(names).size).toBe(names.length)
  })

  it("gives each variable the default config.ts takes, and would name one that is not config.ts's", () => {
    expect(defaultsThatDiffer(CONFIG_REFERENCE)).toEqual([])
    const wrong = [
      { title: 'Wrong', variables: [{ name: 'PORT', default: '3001', description: 'the port' }] },
    ]
    expect(defaultsThatDiffer(wrong)).toEqual(['PORT'])
  })

  it('is what docs/configuration.md shows (`npx tsx scripts/configuration-docs.ts` writes it)', () => {
    const page = readText('../docs/configuration.md')
    expect(page, 'docs/configuration.md differs from src/config-reference.ts').toBe(withGeneratedTables(page))
    for (const name of documented(CONFIG_REFERENCE)) expect(page).toContain(`| \`${name}\` |`)
  })
})
