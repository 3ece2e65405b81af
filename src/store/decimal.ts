// Exact decimal sums for the stores' summaries: amounts as integer units at a scale (BigInt), so
// no sum ever passes through a float, whatever its size.
import { moneyText, PLAIN_DECIMAL } from '../domain/index.ts';

/** An exact non-negative decimal: 1500.5 is `{ units: 15005n, scale: 1 }`. */
export interface ExactDecimal {
  units: bigint;
  scale: number;
}

/** Zero, at the scale of kobo. */
export const ZERO: ExactDecimal = { units: 0n, scale: 2 };

/** Reads a plain decimal string ("1500", "0.10"); throws on anything else rather than guess. */
export function parseDecimal(text: string): ExactDecimal {
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) throw new RangeError(`not a plain decimal amount: ${JSON.stringify(text.slice(0, 40))}`);
  const fraction = match[2] ?? '';
  return { units: BigInt(match[1]! + fraction), scale: fraction.length };
}

/** a + b, exactly, at the larger of their scales. */
export function addDecimals(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: a.units * 10n ** BigInt(scale - a.scale) + b.units * 10n ** BigInt(scale - b.scale), scale };
}

/** a + b where either may be absent (null: no amount); null only when both are. */
export function addOptional(a: ExactDecimal | null, b: ExactDecimal | null): ExactDecimal | null {
  if (a === null) return b;
  return b === null ? a : addDecimals(a, b);
}

/**
 * The amount as money is written: two decimals (kobo), or more only where the exact value needs
 * them ("15007.50", "0.125"); never rounded. The same value gives the same string on every store.
 */
export function formatAmount({ units, scale }: ExactDecimal): string {
  const digits = units.toString().padStart(scale + 1, '0');
  return moneyText(scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
}
