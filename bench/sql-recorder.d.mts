import type { RecordedStatement } from './sql-recording.js'

export function recordStatementsOf(send: () => Promise<unknown>): Promise<RecordedStatement[]>
