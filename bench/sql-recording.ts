import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { registerStop } from './children.js'

/** The preload that records the server's SQL (sql-recorder.mjs). */
const RECORDER_URL = new URL('./sql-recorder.mjs', import.meta.url).href
const HEADER = 'x-bench-record-sql'
// The recorder writes a request's statements 200 ms after its response (sql-recorder.mjs).
const READ_TIMEOUT_MS = 10_000
const POLL_MS = 50

/** A value as pg sent it: text, NULL, or bytes. */
export type WireValue = string | null | { base64: string }

/** One statement the server sent while handling a recorded request, as sql-recorder.mjs writes it. */
export interface RecordedStatement {
  text: string
  /** The prepared statement's name, when the server named it. */
  name?: string
  rowMode?: 'array'
  values: WireValue[]
  /** Sent between BEGIN and COMMIT (those two included) on its connection. */
  inTransaction: boolean
  /** Which of the server's connections (numbered as first seen) sent it. */
  connection: number
  /** When it was sent and how long it took to answer, from the request's arrival. */
  startMs: number
  ms?: number
  /** The answer's first rows (values in column order, as JSON has them). */
  rows?: unknown[][]
}

export interface RecordedRequest {
  label: string
  method: string
  url: string
  /** From the request's arrival at the server to its response's last byte handed to the kernel. */
  responseMs: number
  statements: RecordedStatement[]
}

/** The server's recorder, as the scenario sees it (Target.sql). */
export interface SqlRecorder {
  /** Headers that make the server record the SQL of the request carrying them, under `label`. */
  headers(label: string): Record<string, string>
  /** What the server sent for the request labelled `label` (waits for it to be written). */
  read(label: string): Promise<RecordedRequest>
  /** Takes the recorder out of the server (SIGUSR2), so that the timed requests run unwrapped. */
  stop(): void
}

/** Where the server writes its recordings, and what starts it with the recorder. */
export interface SqlRecording {
  preload: string
  env: Record<string, string>
  recorder(serverPid: number | undefined): SqlRecorder
}

export async function newSqlRecording(): Promise<SqlRecording> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-sql-'))
  registerStop(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'statements.jsonl')
  const read = async (label: string) => {
    const deadline = Date.now() + READ_TIMEOUT_MS
    while (Date.now() < deadline) {
      const text = await readFile(file, 'utf8').catch(() => '')
      const found = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as RecordedRequest)
        .find((recorded) => recorded.label === label)
      if (found) return found
      await delay(POLL_MS)
    }
    throw new Error(`the server recorded no SQL for the request "${label}"`)
  }
  return {
    preload: RECORDER_URL,
    env: { BENCH_SQL_RECORDING: file },
    recorder: (pid) => ({
      headers: (label) => ({ [HEADER]: label }),
      read,
      stop: () => {
        if (pid) process.kill(pid, 'SIGUSR2')
      },
    }),
  }
}
