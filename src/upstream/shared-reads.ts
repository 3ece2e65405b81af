/**
 * The bank clients with their idempotent personal reads shared while in flight, across requests: a
 * name enquiry, a BVN, a posting lookup, a category's bills or a transfer's confirmation asked for
 * again before the bank has answered makes no second call. The bank list and the bill categories are not shared here: their
 * process-wide caches (loaders/reference-cache.ts) already keep one refresh in flight. Only reads
 * made with the subgraph's own credentials are shared; the wallet and OAuth calls carry the
 * caller's and are never shared.
 */
import { createSingleFlight } from '../async/single-flight.ts';
import type { BankArea } from './http.ts';
import type { BankClients } from './types.ts';

/** Told of each read that joined an identical call in flight instead of calling the bank. */
export type OnSharedRead = (area: BankArea, operation: string) => void;

/** `clients` with their reads shared while in flight; the state-changing calls unchanged. */
export function shareIdenticalReads(clients: BankClients, onShared?: OnSharedRead): BankClients {
  const { account, billing, posting, collection } = clients;
  // One map per read, keyed by what the bank is asked (JSON keeps values apart whatever they hold).
  const shared = <A extends unknown[], T>(
    area: BankArea,
    operation: string,
    read: (...args: A) => Promise<T>,
    asked: (...args: A) => unknown = (...args) => args,
  ) => {
    const flights = createSingleFlight(() => onShared?.(area, operation));
    return (...args: A): Promise<T> => flights.share(JSON.stringify(asked(...args)), () => read(...args));
  };
  return {
    ...clients,
    account: {
      ...account,
      lookupAccount: shared(
        'account',
        'lookupAccount',
        (input: Parameters<typeof account.lookupAccount>[0]) => account.lookupAccount(input),
        (input) => [input.accountNumber, input.bankCode ?? null],
      ),
      lookupBvn: shared('account', 'lookupBvn', (bvn: string) => account.lookupBvn(bvn)),
    },
    billing: {
      ...billing,
      listBills: shared('billing', 'listBills', (categoryId: number) => billing.listBills(categoryId)),
    },
    posting: {
      lookupAccount: shared(
        'posting',
        'lookupAccount',
        (input: Parameters<typeof posting.lookupAccount>[0]) => posting.lookupAccount(input),
        (input) => [input.accountNumber, input.beneficiaryBank],
      ),
    },
    collection: {
      ...collection,
      verifyBySessionId: shared('collection', 'verifyBySessionId', (id: string) => collection.verifyBySessionId(id)),
      verifyBySettlementId: shared('collection', 'verifyBySettlementId', (id: string) => collection.verifyBySettlementId(id)),
    },
  };
}
