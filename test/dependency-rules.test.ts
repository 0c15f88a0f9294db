import { type ExecFileException, execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const FIXTURE = 'test/fixtures/dependency-rules'
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise')

/** The dependency-cruiser runs of `npm run lint:layers`, as their argument lists (configurations absolute). */
function layeringRuns(): string[][] {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts
  expect(scripts.lint).toContain('npm run lint:layers')
  return (scripts['lint:layers'] as string).split('&&').map((command) => {
    const [tool, ...args] = command.trim().split(/\s+/)
    expect(tool).toBe('depcruise')
    return args.map((arg, index) => (args[index - 1] === '--config' ? join(ROOT, arg) : arg))
  })
}

interface Run {
  exitCode: number
  /** `rule: from → to` for each violation; for a circle, `to` is the next file or folder of the circle. */
  violations: string[]
  output: string
}

/** One run of the lint's command line, in `cwd`, with its text report (the one `npm run lint` prints). */
function depcruise(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(DEPCRUISE, args, { cwd, timeout: 60_000 }, (error: ExecFileException | null, stdout) => {
      // It exits with the number of errors it found; anything else (a broken configuration) fails the test.
      if (error && (typeof error.code !== 'number' || !stdout.includes('dependency violations')))
        return reject(error)
      const violations = [...stdout.matchAll(/^\s*error (\S+): (\S+) →\s+(\S+)/gm)].map(
        ([, rule, from, to]) => `${rule}: ${from} → ${to}`,
      )
      resolve({ exitCode: error ? Number(error.code) : 0, violations, output: stdout })
    })
  })
}

describe("the layering rules (npm run lint's dependency-cruiser runs)", () => {
  it('report every rule broken in a tree laid out like the project, and nothing it allows', async () => {
    // The configurations name the project's paths (src/modules/...), so the runs start in the fixture.
    const runs = await Promise.all(layeringRuns().map((args) => depcruise(args, join(ROOT, FIXTURE))))
    for (const run of runs) expect(run.exitCode, run.output).toBe(run.violations.length)

    expect(runs.flatMap((run) => run.violations).sort()).toEqual(
      [
        // Two files in a circle, closed by a type-only import.
        'no-circular: src/modules/gamma/first.ts → src/modules/gamma/second.ts',
        // Two module folders using each other through their services, with no circle between files; the
        // circle alpha → gamma → alpha that only alpha's test makes is not reported.
        'no-circular-folders: src/modules/alpha → src/modules/beta',
        'no-circular-folders: src/modules/beta → src/modules/alpha',
        'platform-knows-no-module: src/platform/jobs/queue.ts → src/modules/alpha/alpha.service.ts',
        'platform-knows-no-module: src/platform/jobs/queue.ts → src/app.ts',
        'module-through-public-face: src/modules/gamma/gamma.service.ts → src/modules/beta/beta.repository.ts',
        'test-through-public-face: src/modules/gamma/gamma.test.ts → src/modules/beta/beta.repository.ts',
        'no-test-code-in-production: src/modules/beta/beta.service.ts → test/helpers/seed.ts',
      ].sort(),
    )
  })

  it("leave the fixture out of the project's own runs", async () => {
    for (const args of layeringRuns()) {
      const config = args.slice(args.indexOf('--config'))
      const run = await depcruise([FIXTURE, ...config], ROOT)
      expect(run.exitCode, run.output).toBe(0)
      expect(run.output).toContain('(0 modules, 0 dependencies cruised)')
    }
  })
})
