import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Invalid } from '../../platform/http/errors.js'
import {
  addToBalance,
  findBalance,
  findLedgerEntries,
  insertLedgerEntry,
  takeFromBalance,
} from './accounts.repository.js'

export class InsufficientBalance extends Invalid {
  constructor(required: number, available: number) {
    super('Insufficient balance', { required, available })
  }
}

export interface CreditResult {
  balance: number
  /** False when the reference had been applied before and nothing changed now. */
  applied: boolean
}

/**
 * Takes `quantity` credits for `event` in one transaction, or throws InsufficientBalance with
 * `{ required, available }`. A reference already reserved for the same event is not charged again.
 */
export function reserveCredits(
  db: Database,
  accountId: string,
  event: string,
  quantity: number,
  reference: string | null = null,
): Promise<CreditResult> {
  return inTransaction(db, async (tx) => {
    if (!(await insertLedgerEntry(tx, accountId, { event, quantity: -quantity, reference }))) {
      return { balance: await findBalance(tx, accountId), applied: false }
    }
    const balance = await takeFromBalance(tx, accountId, quantity)
    if (balance === null) throw new InsufficientBalance(quantity, await findBalance(tx, accountId))
    return { balance, applied: true }
  })
}

/** Adds credits (a grant, or the refund of a reservation); applied once per reference. */
export function grantCredits(
  db: Database,
  accountId: string,
  quantity: number,
  reference: string | null = null,
  event = 'grant',
): Promise<CreditResult> {
  return inTransaction(db, async (tx) => {
    if (!(await insertLedgerEntry(tx, accountId, { event, quantity, reference }))) {
      return { balance: await findBalance(tx, accountId), applied: false }
    }
    return { balance: await addToBalance(tx, accountId, quantity), applied: true }
  })
}

export function creditBalance(db: Database, accountId: string): Promise<number> {
  return findBalance(db, accountId)
}

/** What was charged and given back under `reference` (a send's charge and its refund), oldest first. */
export function creditEntriesFor(db: Database, accountId: string, reference: string) {
  return findLedgerEntries(db, accountId, reference)
}
