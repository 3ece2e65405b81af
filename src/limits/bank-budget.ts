/**
 * The running half of the bank-call budget. The estimate refuses what is priced too dear before it
 * runs; this counts what an operation really asks of the bank (a list longer than its `@listSize`,
 * say) and refuses the calls past `MAX_OPERATION_COST`, so the rest of the answer is still served.
 */
import { costActualTooExpensive } from '../errors.ts';
import type { BankClients } from '../upstream/types.ts';

export interface BankBudget {
  /** The clients as this operation may use them: each call spends one; past the budget, it is refused. */
  bank: BankClients;
  /** Calls spent so far (refused ones not counted). */
  spent(): number;
}

/**
 * A budgeted view of `bank` for one operation. Every client method is one bank call; a refused call
 * rejects with `COST_ACTUAL_TOO_EXPENSIVE` without reaching the bank. `onExhausted` runs once, at
 * the first refusal.
 */
export function createBankBudget(bank: BankClients, max: number, onExhausted?: () => void): BankBudget {
  let spent = 0;
  let exhausted = false;
  const spend = () => {
    if (spent < max) {
      spent += 1;
      return;
    }
    if (!exhausted) {
      exhausted = true;
      onExhausted?.();
    }
    throw costActualTooExpensive(max);
  };
  // Each client's view is made on first use: most operations touch one client, many (the cached
  // bank list, the store's notifications) none.
  let account: BankClients['account'] | undefined;
  let transaction: BankClients['transaction'] | undefined;
  let billing: BankClients['billing'] | undefined;
  let wallet: BankClients['wallet'] | undefined;
  let posting: BankClients['posting'] | undefined;
  let collection: BankClients['collection'] | undefined;
  return {
    bank: {
      get account() {
        return (account ??= budgeted(bank.account, spend));
      },
      get transaction() {
        return (transaction ??= budgeted(bank.transaction, spend));
      },
      get billing() {
        return (billing ??= budgeted(bank.billing, spend));
      },
      get wallet() {
        return (wallet ??= budgeted(bank.wallet, spend));
      },
      get posting() {
        return (posting ??= budgeted(bank.posting, spend));
      },
      get collection() {
        return (collection ??= budgeted(bank.collection, spend));
      },
    },
    spent: () => spent,
  };
}

type AsyncMethods<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : never };

/** Each method of `client`, spending first; the refusal is a rejected promise, never a synchronous throw. */
function budgeted<T extends AsyncMethods<T>>(client: T, spend: () => void): T {
  const view: Record<string, unknown> = {};
  for (const [name, method] of Object.entries<(...args: unknown[]) => Promise<unknown>>(client)) {
    view[name] = async (...args: unknown[]) => {
      spend();
      return method.apply(client, args);
    };
  }
  return view as T;
}
