/**
 * JSON whose numbers keep their digits. `JSON.parse` turns `99999999999999.99` into the nearest
 * double (`99999999999999.98…`), so money read through it could be off. Node 24's `JSON.parse` hands
 * its reviver each primitive's source text (`context.source`, TC39's "JSON.parse source text
 * access"), which is kept here as a string wherever it matters.
 */

/** `JSON.parse` with the reviver's third argument, which TypeScript's lib does not know yet. */
type SourceReviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;
const parseWithSource = JSON.parse as unknown as (text: string, reviver: SourceReviver) => unknown;

/**
 * Parses `text` as JSON. A number under one of `asText`'s keys becomes its source text (`1000.0`
 * stays `"1000.0"`), so such a field has one type whichever way the bank writes it; any other
 * number stays a number when a double holds it exactly, and becomes its source text when not.
 * Throws a SyntaxError on text that is not JSON, as `JSON.parse` does.
 */
export function parseKeepingNumberText(text: string, asText: ReadonlySet<string>): unknown {
  return parseWithSource(text, (key, value, context) => {
    if (typeof value !== 'number' || context.source === undefined) return value;
    return asText.has(key) || String(value) !== context.source ? context.source : value;
  });
}
