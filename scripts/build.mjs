import { createHash } from 'node:crypto'
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Compiles src/ into `.dist-<hash of the sources>/`, file for file (the layout tsc would give, so paths such
 * as the migrations folder stay where the code expects them), with source maps so stack traces name `.ts`
 * lines, and points the `dist` symlink at it. esbuild only strips types: `npm run typecheck` is the type
 * check. About 0.3 s (docs/decisions.md).
 *
 * Every start script runs this first, while another process of the same checkout may be running from
 * dist/: so files a process has loaded are never rewritten. Unchanged sources build nothing; changed ones
 * build into a folder of their own, and the symlink is switched atomically (rename). A running process
 * keeps the folder it started from, since Node resolves its main module, and so every import, through the
 * symlink to the real path. The last few builds are kept for the processes still running from them.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const LINK = join(ROOT, 'dist')
const BUILD_PREFIX = '.dist-'
// The current build and this many before it stay: a process started from one still imports lazily from it.
const KEPT_EARLIER_BUILDS = 2

const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => `src/${file}`)
  .sort()

/** What the build's output depends on: every source (path and content), this script and esbuild's version. */
function sourcesHash() {
  const hash = createHash('sha256')
  const esbuildVersion = createRequire(import.meta.url)('esbuild/package.json').version
  hash.update(`esbuild ${esbuildVersion}\0`).update(readFileSync(fileURLToPath(import.meta.url)))
  for (const file of sources) hash.update(`\0${file}\0`).update(readFileSync(join(ROOT, file)))
  return hash.digest('hex').slice(0, 16)
}

async function compile(outdir) {
  // Imported only when there is something to build: a start with unchanged sources spends no time on it.
  const { build } = await import('esbuild')
  await build({
    entryPoints: sources.map((file) => join(ROOT, file)),
    outdir,
    outbase: join(ROOT, 'src'),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    // Node keeps every map it loads: the TypeScript sources inside them were 1.2 MB the server held for
    // nothing, since a stack trace needs only the mappings (and src/ is beside dist/ for a reader).
    sourcesContent: false,
    logLevel: 'warning',
  })
}

/** Builds into a temporary folder renamed into place, so that no one ever sees a half-written build. */
async function buildOnce(folder) {
  if (existsSync(join(ROOT, folder))) return
  const temporary = join(ROOT, `${folder}.tmp-${process.pid}`)
  try {
    await compile(temporary)
    renameSync(temporary, join(ROOT, folder))
  } catch (error) {
    // A concurrent start built the same sources first: its folder is as good as ours.
    if (!existsSync(join(ROOT, folder))) throw error
  } finally {
    rmSync(temporary, { recursive: true, force: true })
  }
}

/** Points `dist` at `folder` with one rename: at every moment `dist` is the old build or the new one. */
function switchLink(folder) {
  const current = lstatSync(LINK, { throwIfNoEntry: false })
  if (current?.isSymbolicLink() && readlinkSync(LINK) === folder) return
  // dist/ as a plain folder (before builds were switched): moved aside, and removed with old builds later.
  if (current?.isDirectory()) renameSync(LINK, join(ROOT, `${BUILD_PREFIX}plain-${process.pid}`))
  const temporary = join(ROOT, `${BUILD_PREFIX}link-${process.pid}`)
  symlinkSync(folder, temporary)
  renameSync(temporary, LINK)
  // Marks the build as the latest used, for pruning (a rebuild of earlier sources reuses its folder).
  const now = new Date()
  utimesSync(join(ROOT, folder), now, now)
}

function isRunning(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** Removes the builds before the last few, and what builds that died half-way left behind. */
function pruneBuilds(folder) {
  const builds = []
  for (const name of readdirSync(ROOT)) {
    if (!name.startsWith(BUILD_PREFIX) || name === folder) continue
    const pid = /(?:\.tmp|^\.dist-link)-(\d+)$/.exec(name)?.[1]
    if (pid) {
      if (!isRunning(Number(pid))) rmSync(join(ROOT, name), { recursive: true, force: true })
    } else {
      builds.push({ name, used: statSync(join(ROOT, name)).mtimeMs })
    }
  }
  builds.sort((a, b) => b.used - a.used)
  for (const { name } of builds.slice(KEPT_EARLIER_BUILDS))
    rmSync(join(ROOT, name), { recursive: true, force: true })
}

const folder = `${BUILD_PREFIX}${sourcesHash()}`
await buildOnce(folder)
switchLink(folder)
pruneBuilds(folder)
