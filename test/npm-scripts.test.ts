import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseNodeScript } from '../bench/start-command.js'

const root = '/srv/app'

describe('a package.json script as node arguments (the bench and the tests run scripts so)', () => {
  it("keeps node's flags and makes the script absolute", () => {
    expect(parseNodeScript('node --enable-source-maps dist/main.js', root)).toEqual({
      nodeArgs: ['--enable-source-maps', '/srv/app/dist/main.js'],
      fromSources: false,
    })
  })

  it("makes the modules and files of node's flags absolute, and keeps the script's own arguments", () => {
    const { nodeArgs } = parseNodeScript(
      'node --import ./hooks.mjs --env-file=.env dist/cli/main.js quickstart',
      root,
    )
    expect(nodeArgs).toEqual([
      '--import',
      pathToFileURL('/srv/app/hooks.mjs').href,
      '--env-file=/srv/app/.env',
      '/srv/app/dist/cli/main.js',
      'quickstart',
    ])
  })

  it('runs tsx as node importing tsx, from the sources', () => {
    const { nodeArgs, fromSources } = parseNodeScript('tsx src/main.ts', root)
    expect(fromSources).toBe(true)
    expect(nodeArgs[0]).toBe('--import')
    expect(nodeArgs[1]).toMatch(/^file:.*\/tsx\//)
    expect(nodeArgs[2]).toBe('/srv/app/src/main.ts')
  })

  it('refuses what is not one plain node or tsx command', () => {
    expect(() => parseNodeScript('node dist/main.js | tee log', root)).toThrow('not a plain command')
    expect(() => parseNodeScript('npm run build', root)).toThrow('neither node nor tsx')
    expect(() => parseNodeScript('node --enable-source-maps', root)).toThrow('names no file to run')
  })
})
