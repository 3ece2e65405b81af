// What JSON.parse cannot tell of a webhook body: how deep it nests, a key given twice in one object
// (it keeps the last, other parsers the first), and where the sessionId is without parsing the body
// at all. None of it recurses: a body of the largest size the webhook reads can nest some 65,000
// levels, past the call stack of any recursive walk, and a check that overflowed would leave the
// delivery without a reply.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

const isJsonSpace = (code: number | undefined) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

/**
 * The first key that one object of `text` (valid JSON, which JSON.parse read as `parsed`) holds twice,
 * at any depth, compared as decoded (`"a"` and `"\u0061"` are one key); undefined when none is.
 *
 * Of our own rather than a streaming parser's: jsonc-parser's `visit` took three to six times
 * JSON.parse itself on a bank body, on every 00. Most bodies are cleared by counting instead of
 * scanning (`withoutDuplicates`), a fifth of JSON.parse; the rest are scanned, about JSON.parse again.
 */
export function duplicateKeyOf(text: string, parsed: unknown): string | undefined {
  return withoutDuplicates(text, parsed) ? undefined : scanForDuplicateKey(text);
}

/**
 * Whether `text` surely gives no key twice, told by counting. In valid JSON every colon outside a
 * string separates a key from its value, so the key tokens are the text's colons less those inside
 * strings. Without a backslash, a string's text is its value, so those inside strings are the colons
 * of the parsed keys and string values: exactly, when nothing was dropped; fewer, when a duplicate's
 * key and value were, which only makes the count of tokens larger. So the tokens equal the parsed keys
 * exactly when no key is given twice. With a backslash (an escape could be a colon) it cannot tell.
 */
function withoutDuplicates(text: string, parsed: unknown): boolean {
  if (text.includes('\\')) return false;
  const count = tally(parsed);
  return colonsIn(text) - count.colons === count.keys;
}

/** The keys of every object in `value`, and the colons of its keys and strings, walked with a stack of our own. */
function tally(value: unknown): { keys: number; colons: number } {
  const count = { keys: 0, colons: 0 };
  const waiting = [value];
  while (waiting.length > 0) {
    const item = waiting.pop();
    if (typeof item === 'string') count.colons += colonsIn(item);
    else if (Array.isArray(item)) for (const child of item) waiting.push(child);
    else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        count.keys += 1;
        count.colons += colonsIn(key);
        waiting.push(child);
      }
    }
  }
  return count;
}

/** How deep a webhook body may nest arrays and objects: the bank's notifications are flat (one level). */
export const MAX_BODY_DEPTH = 32;

/**
 * Whether `value` (JSON.parse's, so a tree) nests arrays and objects more than `max` deep, the
 * outermost counting one; walked with a stack of our own, stopping at the first level past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const waiting: [unknown, number][] = [[value, 1]];
  while (waiting.length > 0) {
    const [item, depth] = waiting.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) waiting.push([child, depth + 1]);
  }
  return false;
}

function colonsIn(text: string): number {
  let colons = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) colons += 1;
  return colons;
}

/** The first key given twice in one object, found by scanning the text: keys taken token by token. */
function scanForDuplicateKey(text: string): string | undefined {
  // One set of keys per open object; null for an open array.
  const open: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      let next = end + 1;
      while (isJsonSpace(text.charCodeAt(next))) next += 1;
      if (text.charCodeAt(next) === COLON) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const keys = open.at(-1)!;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      i = end;
    } else if (code === 0x7b) open.push(new Set());
    else if (code === 0x5b) open.push(null);
    else if (code === 0x7d || code === 0x5d) open.pop();
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start`: the next one not escaped. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let before = end - 1;
    while (text.charCodeAt(before) === BACKSLASH) before -= 1;
    // An even run of backslashes escapes itself, not the quote.
    if ((end - 1 - before) % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/** How much of a sessionId an unauthenticated sender gets echoed and logged. */
export const MAX_ECHOED_SESSION_ID = 256;

const SESSION_ID_KEY = Buffer.from('"sessionId"');
/** The longest source of MAX_ECHOED_SESSION_ID characters: each at most a 6-byte `\uXXXX`, and the quote. */
const SESSION_ID_WINDOW = 1 + MAX_ECHOED_SESSION_ID * 6 + 6;
const STRING_START = /^"((?:[^"\\]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)/;

/**
 * The first MAX_ECHOED_SESSION_ID characters of the body's sessionId, found without parsing the body:
 * the first `"sessionId"` followed by a colon, and at most a window of bytes after it decoded. For a
 * sender the headers refused, whose body is never parsed; `''` when none can be read there.
 */
export function boundedSessionIdOf(body: Buffer): string {
  for (let at = body.indexOf(SESSION_ID_KEY); at !== -1; at = body.indexOf(SESSION_ID_KEY, at + 1)) {
    let next = at + SESSION_ID_KEY.length;
    while (isJsonSpace(body[next])) next += 1;
    if (body[next] !== COLON) continue;
    next += 1;
    while (isJsonSpace(body[next])) next += 1;
    const token = STRING_START.exec(body.subarray(next, next + SESSION_ID_WINDOW).toString('utf8'));
    if (!token) return '';
    try {
      const value = (JSON.parse(`"${token[1]!}"`) as string).slice(0, MAX_ECHOED_SESSION_ID);
      // Cut between the halves of a pair, the half left alone is dropped.
      return /[\ud800-\udbff]$/.test(value) ? value.slice(0, -1) : value;
    } catch {
      // A raw control character: no JSON string.
      return '';
    }
  }
  return '';
}
