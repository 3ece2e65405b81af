/**
 * How an amount of money is written everywhere in the subgraph: a plain decimal string, as the bank
 * sends it ("1500", "1500.00"), so the value is exact. No sign, exponent, spaces or separators.
 */
export const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * The most digits an amount may have on each side of its point. Far past any real transfer (10^18
 * naira), and well within what both stores index (PostgreSQL's numeric in a B-tree entry), so an
 * amount either fits the store or is refused on arrival, never failed on every retry.
 */
export const AMOUNT_DIGITS = { whole: 18, fraction: 18 } as const;

/** Whether `text` is a plain decimal within AMOUNT_DIGITS. */
export function isAmountWithinDigits(text: string): boolean {
  const match = PLAIN_DECIMAL.exec(text);
  return match !== null && match[1]!.length <= AMOUNT_DIGITS.whole && (match[2]?.length ?? 0) <= AMOUNT_DIGITS.fraction;
}

/**
 * A plain decimal written one way per value: no leading zeros, no trailing zeros after the point, so
 * `1500.00`, `1500.0` and `1500` give one text. Anything else is returned as it is.
 */
export function decimalValue(text: string): string {
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) return text;
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/**
 * An amount written as the subgraph writes money in its answers: at least two decimals (kobo), more
 * only where the value needs them, never rounded, so one value reads one way whoever wrote it (the
 * bank's `1500.0` is `1500.00`, `99999999999999.999` stays, `0100` is `100.00`). Anything but a plain
 * decimal is returned as it is.
 */
export function moneyText(text: string): string {
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) return text;
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction}`;
}
