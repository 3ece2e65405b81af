// A read exists once per kind of account filter: every account, one, several. Each store describes
// the read once, with a slot for its account condition, and makes the three variants from it here;
// a filter then picks its variant. Each store keeps its own SQL dialect.
import type { AccountFilter } from './core.ts';

/** The kinds of account filter, one statement variant each. */
export const ACCOUNT_KINDS = ['all', 'one', 'several'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/** One value per kind of account filter, each made by `make`. */
export function byAccountKind<T>(make: (kind: AccountKind) => T): Record<AccountKind, T> {
  return { all: make('all'), one: make('one'), several: make('several') };
}

/** Which variant a filter takes and its accounts: none, the one account, or the several. */
export function accountParameter({
  accountNumber,
  accounts,
}: AccountFilter): ['all', []] | ['one', [string]] | ['several', [readonly string[]]] {
  if (accounts !== undefined) return ['several', [accounts]];
  return accountNumber === undefined ? ['all', []] : ['one', [accountNumber]];
}

/** The reads of a time-ranged page of listNewestFirst: everything since `from`, or [from, to). */
export type RangedRead = 'newestSince' | 'newestInRange';

/**
 * A time-ranged page's read and its times, each as `time` writes it: since `from` when there is no
 * `to`, else [from, to). Without `from` the range starts at `start`, before every time.
 */
export function rangedRead<T>(
  { from, to }: { from: Date | undefined; to: Date | undefined },
  time: (date: Date) => T,
  start: T,
): ['newestSince', [T]] | ['newestInRange', [T, T]] {
  const since = from === undefined ? start : time(from);
  return to === undefined ? ['newestSince', [since]] : ['newestInRange', [since, time(to)]];
}
