// The kinds of value a variable holds, as zod schemas. Each names what is wrong without the
// variable's name, which the report puts in front (a message starting with ':' or '=' follows it).
import { z } from 'zod';

export type Env = Readonly<Record<string, string | undefined>>;

/** `env` trimmed, without its empty variables: `''` counts as unset. */
export function withoutEmpty(env: Env): Record<string, string> {
  const entries = Object.entries(env).map(([name, value]) => [name, value?.trim() ?? ''] as const);
  return Object.fromEntries(entries.filter(([, value]) => value !== ''));
}

export const text = z.string();

/** `field` for a variable that must be given; unset, the problem "is required `why`". */
export function required<T extends z.ZodType<unknown, string>>(why: string, field: T): z.ZodPipe<z.ZodString, T> {
  return z.string({ error: (issue) => (issue.input === undefined ? `is required ${why}` : undefined) }).pipe(field);
}

/** A whole number from `min` to `max`. */
export function whole(min: number, max: number) {
  const valid = (raw: string) => /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) && Number(raw) >= min && Number(raw) <= max;
  return text
    .refine(valid, { error: (issue) => `must be a whole number from ${min} to ${max}, got "${String(issue.input)}"` })
    .transform(Number);
}

/** `true` or `false`, whatever the case. */
export const bool = text
  .regex(/^(true|false)$/i, { error: (issue) => `must be true or false, got "${String(issue.input)}"` })
  .transform((value) => value.toLowerCase() === 'true');

/** One of `values`, whatever the case, given in lower case. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, error: (given: string) => string) {
  return text.toLowerCase().pipe(z.enum(values, { error: (issue) => error(String(issue.input)) }));
}

/** Whether `value` is an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  const protocol = URL.parse(value)?.protocol;
  return protocol === 'http:' || protocol === 'https:';
}

/** An entry as a refusal may quote it: whatever a URL carries before its host `user:password@` is hidden, since an error is printed. */
export function quotable(entry: string): string {
  return entry.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');
}

/** An absolute http(s) URL without its trailing slashes, which would double up with the paths appended. */
export const baseUrl = text.refine(isHttpUrl, 'must be an absolute http(s) URL').transform((value) => value.replace(/\/+$/, ''));

/**
 * The comma-separated entries of `value`, each read by `parse`; every entry it refuses is a problem
 * (`refused` words it), and so is a list with no entry at all.
 */
export function entries<T>(
  value: string,
  ctx: z.RefinementCtx,
  parse: (entry: string) => T | undefined,
  refused: (entry: string) => string,
  empty: string,
): T[] {
  const given = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (given.length === 0) ctx.addIssue(empty);
  return given.flatMap((entry) => {
    const parsed = parse(entry);
    if (parsed === undefined) ctx.addIssue(refused(entry));
    return parsed === undefined ? [] : [parsed];
  });
}
