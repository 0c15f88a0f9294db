import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * README's walk, as its reader runs it: every ```sh block of README and then of the docs pages it leads to,
 * in order in one shell, each `# => answer` line stating what the commands since the previous one (or the
 * block's start) print, `…` standing for any text (a long one goes on over `#     ` lines). Blocks whose info
 * string says `no-run` (installing, starting, deploying) are not run; `needs-provider` ones are, against the
 * stand-ins the caller gives the server.
 */

/** The commands from the previous `# =>` line, or the block's start, to the next one. */
export interface WalkStep {
  /** Where the step's expectation (or, without one, its block) is, for the failure message. */
  where: string
  script: string
  expected?: string
}

const FENCE = /^```(\S*)(.*)$/
const EXPECTATION = /^# => (.*)$/
/** A long answer goes on over lines indented under its `# =>`; they are joined without a line break. */
const CONTINUATION = /^# {4,}(\S.*)$/
const RUN_LANGUAGES = new Set(['sh', 'bash'])

/** The walk of one page (`file`, as the failure names it), step by step: the blocks to run, cut at their expectations. */
export function walkSteps(page: string, file: string): WalkStep[] {
  const steps: WalkStep[] = []
  let heading = '(top)'
  /** The fenced block the line is in, if any; `run` false for a block the walk skips. */
  let block: { start: number; run: boolean; lines: string[] } | undefined
  /** The step whose `# =>` line was the previous line: a continuation line adds to it. */
  let expecting: WalkStep | undefined
  page.split('\n').forEach((line, index) => {
    const lineNumber = index + 1
    const fence = FENCE.exec(line)
    const continuation = CONTINUATION.exec(line)
    if (expecting?.expected !== undefined && continuation) {
      expecting.expected += continuation[1]
      return
    }
    expecting = undefined
    if (!block) {
      if (fence) {
        const run = RUN_LANGUAGES.has(fence[1] ?? '') && !/\bno-run\b/.test(fence[2] ?? '')
        block = { start: lineNumber, run, lines: [] }
      } else if (line.startsWith('#')) {
        heading = line.replace(/^#+\s*/, '')
      }
      return
    }
    if (fence) {
      if (block.run && block.lines.some((l) => l.trim() !== '')) {
        steps.push({
          where: `${file}, "${heading}", block at line ${block.start}`,
          script: block.lines.join('\n'),
        })
      }
      block = undefined
      return
    }
    if (!block.run) return
    const expectation = EXPECTATION.exec(line)
    if (!expectation) {
      block.lines.push(line)
      return
    }
    expecting = {
      where: `${file}, "${heading}", line ${lineNumber}`,
      script: block.lines.join('\n'),
      expected: expectation[1],
    }
    steps.push(expecting)
    block.lines = []
  })
  return steps
}

/** The walk across pages (paths from `root`), in the order given: one shell, so a page uses what the ones before it set. */
export function walkPages(root: string, pages: readonly string[]): WalkStep[] {
  return pages.flatMap((page) => walkSteps(readFileSync(join(root, page), 'utf8'), page))
}

/** `…` matches any text, the rest itself; surrounding whitespace is not compared. */
export function matchesExpectation(output: string, expected: string): boolean {
  const pattern = expected
    .trim()
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?')
  return new RegExp(`^${pattern}$`).test(output.trim())
}

const MARK = '\u001ewalk-step'

export interface WalkResult {
  /** The step that exited non-zero, or that printed something else than its expectation. */
  failure?: { step: WalkStep; reason: string }
  stepsRun: number
}

/**
 * Runs the steps in one `bash -euo pipefail`, as one terminal session: variables and functions carry from
 * block to block. A marker printed before each step cuts the output into the steps' own.
 */
export async function runWalk(
  steps: WalkStep[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<WalkResult> {
  const script = [
    ...steps.map((step, index) => `printf '\\n${MARK} %s\\n' ${index}\n${step.script}`),
    `printf '\\n${MARK} %s\\n' ${steps.length}`,
  ].join('\n')
  const { code, stdout, stderr } = await runBash(script, options)
  const outputs = stdout.split(new RegExp(`\\n${MARK} \\d+\\n`)).slice(1)
  const completed = code === 0 ? steps.length : outputs.length - 1
  for (let index = 0; index < Math.min(completed, steps.length); index++) {
    const step = steps[index] as WalkStep
    const output = outputs[index] ?? ''
    if (step.expected !== undefined && !matchesExpectation(output, step.expected)) {
      return {
        stepsRun: index + 1,
        failure: { step, reason: `printed\n  ${output.trim()}\ninstead of\n  ${step.expected}` },
      }
    }
  }
  if (code === 0) return { stepsRun: steps.length }
  const failed = steps[completed] ?? steps[steps.length - 1]
  return {
    stepsRun: completed + 1,
    failure: {
      step: failed as WalkStep,
      reason: `exited ${code}; its output:\n${outputs[completed] ?? ''}\nstderr:\n${stderr.slice(-2000)}`,
    },
  }
}

function runBash(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that a timeout ends what the walk started too (npm, curl).
      detached: true,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), options.timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({
        code,
        stdout,
        stderr: code === null ? `${stderr}\n(killed after ${options.timeoutMs} ms)` : stderr,
      })
    })
  })
}
