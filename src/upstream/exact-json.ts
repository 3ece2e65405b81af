/**
 * JSON whose numbers keep their digits. `JSON.parse` turns `99999999999999.99` into the nearest
 * double (`99999999999999.98…`), so money read through it could be off. Node 24's `JSON.parse` hands
 * its reviver each primitive's source text (`context.source`, TC39's "JSON.parse source text
 * access"), which is kept here as a string wherever it matters.
 */

/** `JSON.parse` with the reviver's third argument, which TypeScript's lib does not know yet. */
type SourceReviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;
/** `JSON.parse`, its reviver handed each primitive's source text. Its walk recurses: depth must be bounded first. */
export const parseWithSource = JSON.parse as unknown as (text: string, reviver: SourceReviver) => unknown;

/**
 * Parses `text` as JSON. A number under one of `asText`'s keys becomes its source text (`1000.0`
 * stays `"1000.0"`), written out in full when the source has an exponent (`1.0E7`, as Java's JSON
 * writers put a double of ten million or more, becomes `"10000000"`), so such a field has one type
 * whichever way the bank writes it; any other number stays a number when a double holds it exactly,
 * and becomes its source text when not. Throws a SyntaxError on text that is not JSON, as
 * `JSON.parse` does.
 */
export function parseKeepingNumberText(text: string, asText: ReadonlySet<string>): unknown {
  return parseWithSource(text, (key, value, context) => {
    if (typeof value !== 'number' || context.source === undefined) return value;
    if (asText.has(key)) return withoutExponent(context.source);
    return String(value) !== context.source ? context.source : value;
  });
}

/** The furthest an exponent moves the point here: past it no amount fits the store (18 digits a side), and the text is left as it is. */
const MAX_EXPONENT = 40;

/** A JSON number's text with its exponent written out exactly, digit for digit (`1.5E-3` is `0.0015`); other text as given. */
export function withoutExponent(source: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(source);
  if (!match) return source;
  const [, sign = '', whole = '', fraction = '', exponentText = ''] = match;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT) return source;
  const digits = whole + fraction;
  const point = whole.length + exponent;
  const plain =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return sign + plain.replace(/^0+(?=\d)/, '');
}

/** A decimal as the bank may write one: optional minus, digits, optional fraction, optional exponent. */
const BANK_DECIMAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * An amount as the bank writes it (a JSON number's source text, or a string), as plain decimal text
 * with every digit kept; `undefined` when it is none. Spaces around are dropped, an exponent written
 * out (`1.0E7` is `10000000`, `1.5e-1` is `0.15`), a negative zero (`-0.0`, as Java writes one) is
 * zero; any other negative is refused, as is an exponent past any amount.
 */
export function plainAmount(text: string): string | undefined {
  const trimmed = text.trim();
  if (!BANK_DECIMAL.test(trimmed)) return undefined;
  const plain = withoutExponent(trimmed);
  const negative = plain.startsWith('-');
  const digits = negative ? plain.slice(1) : plain;
  if (!/^\d+(?:\.\d+)?$/.test(digits) || (negative && /[1-9]/.test(digits))) return undefined;
  return digits;
}
