import { execFileSync } from 'node:child_process'
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { parseNodeScript } from '../bench/start-command.js'
import { freePort } from './helpers/app.js'
import { PROJECT_ROOT, processGroupAlive, spawnNpmScript } from './helpers/npm-scripts.js'
import type { WatchedProcess } from './helpers/processes.js'

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

describe('parseNodeScript after exec', () => {
  it('reads `exec node …` as the node command it runs', () => {
    expect(parseNodeScript('exec node --enable-source-maps dist/worker.js', root).nodeArgs).toEqual([
      '--enable-source-maps',
      '/srv/app/dist/worker.js',
    ])
  })
})

/** The caller's environment for a server on the embedded database in `dataDir`, nothing else configured. */
function serverEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    SHUTDOWN_DELAY_MS: '0',
  }
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'REDIS_URL']) delete env[name]
  return env
}

async function statusAnswers(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/status`)).ok
  } catch {
    return false
  }
}

/** Waits until `ready` holds; fails with what npm printed if it exits first or takes over 45 s. */
async function until(npm: WatchedProcess, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 45_000
  while (!(await ready())) {
    if (npm.child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready:\n${npm.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('signals sent to npm (docker stop, systemd, Ctrl-C) reach the process the script runs', () => {
  const groups: number[] = []
  afterAll(() => {
    for (const pgid of groups) if (processGroupAlive(pgid)) process.kill(-pgid, 'SIGKILL')
  })

  function run(script: string, env: NodeJS.ProcessEnv): WatchedProcess {
    const started = spawnNpmScript(script, env)
    groups.push(started.child.pid as number)
    return started
  }

  it('SIGTERM to `npm start`: the server drains and exits, npm exits 0, nothing is left running', async () => {
    const port = await freePort()
    const npm = run('start', serverEnv(mkdtempSync(join(tmpdir(), 'platform-npm-start-')), port))
    await until(npm, () => statusAnswers(port))

    npm.child.kill('SIGTERM')
    expect(await npm.exited).toBe(0)
    expect(npm.output()).toContain('SIGTERM: readiness answers 503')
    expect(processGroupAlive(npm.child.pid as number)).toBe(false)
    expect(await statusAnswers(port)).toBe(false)
  }, 60_000)

  it('SIGINT to the whole group (Ctrl-C in a terminal, setsid and kill): npm start exits 0', async () => {
    const port = await freePort()
    const npm = run('start', serverEnv(mkdtempSync(join(tmpdir(), 'platform-npm-start-')), port))
    await until(npm, () => statusAnswers(port))

    process.kill(-(npm.child.pid as number), 'SIGINT')
    expect(await npm.exited).toBe(0)
    expect(processGroupAlive(npm.child.pid as number)).toBe(false)
  }, 60_000)

  it('SIGTERM to `npm run worker`: the workers stop, npm exits 0, the data directory is free again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-npm-worker-'))
    const npm = run('worker', serverEnv(dataDir, await freePort()))
    await until(npm, () => npm.output().includes('Job workers started'))

    npm.child.kill('SIGTERM')
    expect(await npm.exited).toBe(0)
    expect(processGroupAlive(npm.child.pid as number)).toBe(false)
    // The embedded database's lock went with the worker: a server starts on the same directory.
    const port = await freePort()
    const next = run('start', serverEnv(dataDir, port))
    await until(next, () => statusAnswers(port))
    next.child.kill('SIGTERM')
    expect(await next.exited).toBe(0)
  }, 90_000)
})

/** Each file of a build folder with its inode and modification time: what a rewrite would change. */
function filesOf(folder: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
    const stat = statSync(join(folder, file))
    if (stat.isFile()) files.set(file, `${stat.ino} ${stat.mtimeMs}`)
  }
  return files
}

function runBuild(root: string): void {
  execFileSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'pipe' })
}

describe('starting a process never rewrites the files a running process loaded', () => {
  it('a start with unchanged sources builds nothing: dist/ is the same folder with the same files', () => {
    const before = realpathSync(join(PROJECT_ROOT, 'dist'))
    const files = filesOf(before)
    execFileSync('npm', ['run', '--silent', 'prestart'], { cwd: PROJECT_ROOT, stdio: 'pipe' })
    expect(realpathSync(join(PROJECT_ROOT, 'dist'))).toBe(before)
    expect(filesOf(before)).toEqual(files)
  })

  it('changed sources build into a new folder that dist/ then names; the running one stays as it was', () => {
    // A copy of the project's sources and build script, so that changing a source disturbs no other test.
    const root = mkdtempSync(join(tmpdir(), 'platform-build-'))
    onTestFinished(() => rmSync(root, { recursive: true, force: true }))
    cpSync(join(PROJECT_ROOT, 'src'), join(root, 'src'), { recursive: true })
    cpSync(join(PROJECT_ROOT, 'scripts'), join(root, 'scripts'), { recursive: true })
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'))
    runBuild(root)
    const running = realpathSync(join(root, 'dist'))
    const files = filesOf(running)
    const version = readFileSync(join(running, 'main.js'), 'utf8')

    appendFileSync(join(root, 'src/main.ts'), '\nexport const changed = true\n')
    runBuild(root)

    const next = realpathSync(join(root, 'dist'))
    expect(next).not.toBe(running)
    expect(readFileSync(join(next, 'main.js'), 'utf8')).not.toBe(version)
    expect(filesOf(running)).toEqual(files)
    expect(readFileSync(join(running, 'main.js'), 'utf8')).toBe(version)
  })
})
