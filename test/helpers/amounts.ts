/**
 * Awkward amounts for the exactness tests, and an independent BigInt reference sum to compare the
 * stores' answers with (it shares no code with src/store/decimal.ts).
 */

/** Amounts a float would get wrong, at every scale the bank may send, past 2^53 kobo, and beyond kobo. */
export const AWKWARD_AMOUNTS = [
  '0.10',
  '0.20',
  '1234567890123.45',
  '999999999999.99',
  '7',
  '15000.5',
  // 10^16 - 1 kobo: above 2^53 kobo (about ₦90 trillion), the largest kept as kobo in SQLite.
  '99999999999999.99',
  '0.01',
  '1500.000',
  '0000012.30',
] as const;

/** Amounts no kobo column holds: finer than kobo, or 10^16 naira and more. */
export const BEYOND_KOBO_AMOUNTS = ['0.125', '123456789012345678901234567890.5', '10000000000000000', '1.0000000001'] as const;

const SCALE = 18;

/**
 * The exact sum of the given amounts (nulls skipped) as the API writes it: two decimals, more only
 * where the value needs them; null when every amount is null (or there are none) unless `zero`.
 */
export function referenceSum(amounts: readonly (string | null)[], zero = false): string | null {
  const present = amounts.filter((amount): amount is string => amount !== null);
  if (present.length === 0) return zero ? '0.00' : null;
  let total = 0n;
  for (const amount of present) {
    const [whole, fraction = ''] = amount.split('.');
    if (fraction.length > SCALE) throw new Error(`reference sum: more than ${SCALE} decimals in ${amount}`);
    total += BigInt(whole! + fraction.padEnd(SCALE, '0'));
  }
  const digits = total.toString().padStart(SCALE + 1, '0');
  const fraction = digits.slice(-SCALE).replace(/0+$/, '').padEnd(2, '0');
  return `${digits.slice(0, -SCALE)}.${fraction}`;
}

type AmountField = 'transactionAmount' | 'settledAmount' | 'feeAmount' | 'vatAmount';

/**
 * The totals a summary must give for these notifications (domain records or webhook bodies alike):
 * the count and each amount's reference sum, an absent amount counted as not carried, and
 * `refutedCount`, how many refuted ones were left out beside them.
 */
export function referenceTotals(notifications: readonly Partial<Record<AmountField, unknown>>[], refutedCount = 0) {
  const sum = (field: AmountField, zero = false) =>
    referenceSum(
      notifications.map((notification) => (notification[field] as string | null | undefined) ?? null),
      zero,
    );
  return {
    count: notifications.length,
    refutedCount,
    transactionAmount: sum('transactionAmount', true),
    settledAmount: sum('settledAmount'),
    feeAmount: sum('feeAmount'),
    vatAmount: sum('vatAmount'),
  };
}
