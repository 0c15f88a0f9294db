import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './helpers/app.js'
import { createEmptyTestDatabase, type TestDatabase } from './helpers/database.js'
import {
  type ComposeService,
  composeServices,
  deployingBlockVariables,
  dockerfileStages,
  envOf,
  execForm,
  instructionsOf,
  interpolate,
  packageScriptArgv,
  variablesConfigReads,
} from './helpers/deploy-files.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'
import { type WatchedProcess, watchProcess } from './helpers/processes.js'

const [build, runtime] = dockerfileStages()
const services = composeServices()
/** The services that run the image: the migrations, the API and the workers. */
const PLATFORM_SERVICES = ['migrate', 'api', 'worker'] as const

/** The one RUN of the build stage: `sh scripts/production-install.sh <folder>`, its folder what runtime copies. */
function buildStep(): { script: string; folder: string } {
  const runs = build ? instructionsOf(build, 'RUN') : []
  expect(runs).toHaveLength(1)
  const [shell, script, folder, ...rest] = (runs[0] as string).replace(/^(--\S+\s+)+/, '').split(/\s+/)
  expect({ shell, script, rest }).toEqual({ shell: 'sh', script: 'scripts/production-install.sh', rest: [] })
  return { script: script as string, folder: folder as string }
}

describe('the Dockerfile', () => {
  it('builds with scripts/production-install.sh alone, and its runtime stage copies what that installed and nothing else', () => {
    expect(build?.name).toBe('build')
    expect(runtime?.name).toBe('runtime')
    // The whole build context, which the test below stands for with a clean clone.
    expect(build && instructionsOf(build, 'COPY')).toEqual(['. .'])
    const { folder } = buildStep()
    const copies = runtime ? instructionsOf(runtime, 'COPY') : []
    expect(copies).toEqual([`--from=build ${folder} ${folder}`])
    expect(runtime && instructionsOf(runtime, 'WORKDIR')).toEqual([folder])
  })

  it('runs node as npm start does, directly (SIGTERM reaches it), as a user other than root', () => {
    const stage = runtime as NonNullable<typeof runtime>
    const cmd = instructionsOf(stage, 'CMD')
    expect(cmd).toHaveLength(1)
    expect(execForm(cmd[0] as string)).toEqual(packageScriptArgv('start'))
    const users = instructionsOf(stage, 'USER')
    expect(users).toHaveLength(1)
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/)
    expect(envOf(stage)).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' })
    // Run on the PostgreSQL leg below, as Docker runs it.
    expect(instructionsOf(stage, 'HEALTHCHECK')).toHaveLength(1)
  })

  it('keeps out of the build context what a clean clone lacks: each line of .gitignore, and .git', () => {
    const ignored = new Set(readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8').split('\n'))
    const gitignore = readFileSync(join(PROJECT_ROOT, '.gitignore'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
    expect(ignored).toContain('.git')
    for (const line of gitignore) {
      const pattern = line.replace(/\/$/, '')
      // .gitignore anchors a pattern with a slash to the root; one without matches at any depth (**/ here).
      const expected = pattern.startsWith('/')
        ? pattern.slice(1)
        : pattern.includes('/')
          ? pattern
          : `**/${pattern}`
      expect(ignored, `.dockerignore lacks ${expected} (.gitignore: ${line})`).toContain(expected)
    }
  })
})

describe('compose.yaml', () => {
  it("runs the migrations, then the API and the workers, with package.json's commands", () => {
    expect(services.migrate?.command).toEqual(packageScriptArgv('db:migrate'))
    expect(services.api?.command).toEqual(packageScriptArgv('start'))
    expect(services.worker?.command).toEqual(packageScriptArgv('worker'))
    expect(services.migrate?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } })
    for (const name of ['api', 'worker'] as const) {
      expect(services[name]?.depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      })
    }
    // The API alone serves HTTP: the image's HEALTHCHECK stays on for it only.
    expect(services.api?.healthcheck).toBeUndefined()
    expect(services.migrate?.healthcheck).toEqual({ disable: true })
    expect(services.worker?.healthcheck).toEqual({ disable: true })
    expect(services.api?.environment?.RUN_WORKERS).toBe('false')
    for (const name of PLATFORM_SERVICES) expect(services[name]?.build).toBe('.')
  })

  it("sets only variables config.ts reads, and every one of the docs' smallest production environment and SendGrid's", () => {
    const read = variablesConfigReads()
    for (const name of PLATFORM_SERVICES) {
      for (const variable of Object.keys(services[name]?.environment ?? {}))
        expect(read, `compose.yaml's ${name} sets ${variable}, which config.ts does not read`).toContain(
          variable,
        )
    }
    const api = Object.keys(services.api?.environment ?? {})
    const documented = [
      ...deployingBlockVariables('The smallest production environment that starts'),
      ...deployingBlockVariables('Sending through SendGrid adds'),
      'REDIS_URL',
    ]
    for (const variable of documented)
      expect(api, `compose.yaml's api lacks the docs' ${variable}`).toContain(variable)
  })

  it('gives the migrations, the API and the workers one database and one Redis: the services of the file', () => {
    const values = composeTestValues()
    const postgres = services.postgres?.environment ?? {}
    for (const name of PLATFORM_SERVICES) {
      const environment = services[name]?.environment ?? {}
      const database = new URL(interpolate(environment.DATABASE_URL ?? '', values))
      expect(database.hostname).toBe('postgres')
      expect(database.username).toBe(postgres.POSTGRES_USER)
      expect(database.password).toBe(interpolate(postgres.POSTGRES_PASSWORD ?? '', values))
      expect(database.pathname).toBe(`/${postgres.POSTGRES_DB}`)
      expect(new URL(interpolate(environment.REDIS_URL ?? '', values)).hostname).toBe('redis')
    }
  })
})

/** What an operator sets for compose.yaml's required variables (`${NAME:?}`), as docs/docker.md says. */
function composeTestValues(): Record<string, string> {
  return {
    PUBLIC_BASE_URL: 'https://api.example.com',
    TRUST_PROXY: '127.0.0.1',
    POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    JWT_SECRET: randomBytes(32).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // A JWK, one line, as docs/docker.md makes it for compose's .env.
    OAUTH_SIGNING_KEY: JSON.stringify(
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
    ),
  }
}

/** A service's environment as compose gives it to the container for an operator who set `values`. */
function composeEnvironment(service: ComposeService, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(value, values)]),
  )
}

/** `argv` spawned as the container runs it: the program itself (no shell), in `cwd`, with exactly `env`. */
function run(argv: string[], cwd: string, env: Record<string, string>): WatchedProcess {
  const [program = '', ...args] = argv
  // The image's `node`: here the node running the tests (Node.js 24 on the PostgreSQL leg, as in the image).
  const command = program === 'node' ? process.execPath : program
  return watchProcess(spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }))
}

/** The environment variables an install's commands need that are not the service's: PATH and HOME. */
const HOST_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }

/**
 * The heavy part (a clean clone, the full install and build, the production install: 900 MB of temporary
 * files, 25 s on an idle machine and two minutes on a busy one) runs once per gate run, on the PostgreSQL leg: there the compose file's whole sequence
 * (migrations, API, workers on PostgreSQL and Redis) can run, on Node.js 24 as in the image, and the
 * embedded database's start is tried there as well. The leg on the embedded database checks the files above.
 */
const onServers = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL)

describe.skipIf(!onServers)('the production install, built as the image is from a clean clone', () => {
  // Made in beforeAll: a skipped suite's body still runs, to list its tests.
  let work = ''
  let clone = ''
  let install = ''
  const running: ChildProcess[] = []
  const values = composeTestValues()
  let database: TestDatabase | undefined

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'platform-deploy-'))
    clone = join(work, 'clone')
    install = join(work, 'app')
    const cloned = spawnSync('git', ['clone', '--quiet', PROJECT_ROOT, clone], { encoding: 'utf8' })
    expect(cloned.status, cloned.stderr).toBe(0)
    // The build stage's step, in the clone (the build context), into a folder of the test's own. npm's
    // cache answers first (the checkout was installed from it); nothing of npm's own settings is inherited.
    const { script } = buildStep()
    const installed = run(['sh', script, install], clone, { ...HOST_ENV, npm_config_prefer_offline: 'true' })
    expect(await installed.exited, installed.output()).toBe(0)
  }, 300_000)

  // Dropping a database waits for a checkpoint, long on a machine busy writing (a minute was seen).
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL')
    if (work) await rm(work, { recursive: true, force: true })
    await database?.drop()
  }, 180_000)

  it('holds no dev dependency: the toolchain, test runner, browser and edge runtime stay in the build', () => {
    const lock = JSON.parse(readFileSync(join(clone, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>
    }
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev)
      .map(([path]) => path)
    // The largest of them, so that the check below cannot pass on a lock that marks nothing dev.
    for (const name of ['vitest', 'typescript', '@sparticuz/chromium', 'workerd', 'tsx', '@biomejs/biome'])
      expect(devOnly).toContain(`node_modules/${name}`)
    expect(devOnly.filter((path) => existsSync(join(install, path)))).toEqual([])
    expect(existsSync(join(install, 'node_modules/fastify'))).toBe(true)
    // The build's output as a plain folder (not the checkout's symlink), the migrations beside it.
    expect(existsSync(join(install, 'dist/main.js'))).toBe(true)
    expect(existsSync(join(install, 'drizzle/meta/_journal.json'))).toBe(true)
    expect(existsSync(join(install, 'src'))).toBe(false)
  })

  it('takes under a third of the full install on disk', () => {
    const kilobytes = (path: string) =>
      Number(spawnSync('du', ['-sk', path], { encoding: 'utf8' }).stdout.split('\t')[0])
    expect(kilobytes(install) * 3).toBeLessThan(kilobytes(join(clone, 'node_modules')))
  })

  /** The image's environment (Dockerfile's ENV), then the service's from compose.yaml, then `overrides`. */
  async function serviceEnv(service: ComposeService, overrides: Record<string, string>) {
    const dataDir = mkdtempSync(join(work, 'data-'))
    return {
      ...HOST_ENV,
      ...envOf(runtime as NonNullable<typeof runtime>),
      ...composeEnvironment(service, values),
      // The test's own loopback port and folder, in place of the container's network and volume.
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      ...overrides,
    }
  }

  function start(argv: string[], env: Record<string, string>): WatchedProcess {
    const started = run(argv, install, env)
    running.push(started.child)
    return started
  }

  /** The image's CMD: what a container of it runs when compose or `docker run` names no command. */
  const imageCommand = () =>
    execForm(instructionsOf(runtime as NonNullable<typeof runtime>, 'CMD')[0] as string)

  /** The image's HEALTHCHECK command, run as Docker runs it in the container: its exit code. */
  function healthcheck(env: Record<string, string>): number | null {
    const [args] = instructionsOf(runtime as NonNullable<typeof runtime>, 'HEALTHCHECK').map((line) =>
      line.slice(line.indexOf('CMD ')),
    )
    const [, ...rest] = execForm(args as string)
    return spawnSync(process.execPath, rest, { env, timeout: 20_000 }).status
  }

  it("starts on the embedded database with compose.yaml's API settings, answers the health check, drains on SIGTERM", async () => {
    // The compose file's API without its PostgreSQL and Redis; a drain long enough to watch.
    const env: Record<string, string> = await serviceEnv(services.api ?? {}, { SHUTDOWN_DELAY_MS: '3000' })
    delete env.DATABASE_URL
    delete env.REDIS_URL
    const server = start(imageCommand(), env)
    await server.printed('listening on', 90_000)
    const ready = await fetch(`http://127.0.0.1:${env.PORT}/status/ready`)
    expect(ready.status).toBe(200)
    expect(healthcheck(env)).toBe(0)

    server.child.kill('SIGTERM')
    // Draining: readiness 503, and the health check says unhealthy, until the delay is over.
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${env.PORT}/status/ready`)).status).toBe(503)
    expect(healthcheck(env)).toBe(1)
    expect(await server.exited).toBe(0)
    expect(healthcheck(env)).toBe(1)
  }, 120_000)

  it("runs compose.yaml's sequence on PostgreSQL and Redis: the migrations, then the API and the workers", async () => {
    database = await createEmptyTestDatabase()
    const servers = { DATABASE_URL: database.url as string, REDIS_URL: process.env.REDIS_URL as string }

    const migrate = start(services.migrate?.command ?? [], await serviceEnv(services.migrate ?? {}, servers))
    expect(await migrate.exited, migrate.output()).toBe(0)
    expect(migrate.output()).toContain('"migrated":true')

    const apiEnv = await serviceEnv(services.api ?? {}, servers)
    const api = start(services.api?.command ?? [], apiEnv)
    const worker = start(services.worker?.command ?? [], await serviceEnv(services.worker ?? {}, servers))
    await api.printed('listening on', 90_000)
    await worker.printed('Job workers started', 90_000)
    expect((await fetch(`http://127.0.0.1:${apiEnv.PORT}/status/ready`)).status).toBe(200)
    expect(healthcheck(apiEnv)).toBe(0)

    api.child.kill('SIGTERM')
    worker.child.kill('SIGTERM')
    expect(await api.exited, api.output()).toBe(0)
    expect(await worker.exited, worker.output()).toBe(0)
  }, 180_000)
})
