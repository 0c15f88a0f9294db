import type { ChildProcess } from 'node:child_process'

/** A child process with everything it printed so far (stdout and stderr together). */
export interface WatchedProcess {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
  /** Resolves once the output holds `text`; fails with the output if the process ends or `timeoutMs` passes. */
  printed: (text: string, timeoutMs?: number) => Promise<void>
}

export function watchProcess(child: ChildProcess): WatchedProcess {
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const printed = async (text: string, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs
    while (!output.includes(text)) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`never printed ${JSON.stringify(text)}:\n${output}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { child, output: () => output, exited, printed }
}
