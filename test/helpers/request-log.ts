// What the recording proxy keeps of each request, for tests of the wire format: everything a client
// chose (method, path, query, headers, body, and which credentials it sent) but no credential's value.
// The clients send real-looking passwords, tokens and codes (the caller's own, in wallet and OAuth
// calls), and a test failure or a debugger prints whatever `received` holds.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** One request as the client sent it, each secret's value replaced by its fingerprint. */
export interface ReceivedRequest {
  method: string;
  /** The path as sent, without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case names; a repeated header joined with ", ". */
  headers: Record<string, string | undefined>;
  /**
   * The body text (`''` when there was none). A form keeps its exact encoding with each secret's
   * value swapped in place; a JSON body holding a secret is re-serialised; a body that is neither
   * JSON nor a form is kept only as its length, since nothing says where a secret would be in it.
   */
  body: string;
}

/** A request as it came off the wire: the request target (path and query) as sent, the body read whole. */
export interface WireRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RequestLog {
  /** Every request recorded, oldest first. */
  received: ReceivedRequest[];
  /**
   * What `received` shows in place of `value` when it is a secret: a keyed hash, so a test proves the
   * right credential was sent while a dump of `received` cannot be matched against guesses.
   */
  fingerprint(value: string): string;
  /** Redacts `request` and appends it to `received`. */
  record(request: WireRequest): ReceivedRequest;
}

/** Names (lower case, letters and digits only) that hold a credential in a header, a query or a body. */
const SECRET_NAMES = new Set(['authorization', 'proxyauthorization', 'cookie', 'code', 'pin', 'otp']);
/** Endings that mark the rest: `password`, `client_secret`, `x-refresh-token`, `resetCode`, `x-api-key`. */
const SECRET_ENDINGS = ['password', 'secret', 'token', 'resetcode', 'apikey', 'signature'];

/** Whether a header, query or body field of this name carries a secret. */
function isSecretName(name: string): boolean {
  const plain = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_NAMES.has(plain) || SECRET_ENDINGS.some((ending) => plain.endsWith(ending));
}

/** An empty log with a key of its own: its fingerprints mean nothing outside the log that made them. */
export function createRequestLog(): RequestLog {
  const key = randomBytes(32);
  const fingerprint = (value: string) => `[redacted ${createHmac('sha256', key).update(value).digest('hex').slice(0, 16)}]`;
  const received: ReceivedRequest[] = [];
  return {
    received,
    fingerprint,
    record({ method, url, headers: sent, body }) {
      const at = url.indexOf('?');
      const headers: Record<string, string | undefined> = {};
      for (const name of Object.keys(sent)) headers[name] = redactField(name, headerValue(sent, name), fingerprint);
      const query: Record<string, string> = {};
      for (const [name, value] of new URLSearchParams(at === -1 ? '' : url.slice(at + 1)))
        query[name] = redactField(name, value, fingerprint);
      const entry: ReceivedRequest = {
        method,
        path: at === -1 ? url : url.slice(0, at),
        query,
        headers,
        body: redactBody(body, headerValue(sent, 'content-type'), fingerprint),
      };
      received.push(entry);
      return entry;
    },
  };
}

/** One header's value; a repeated header joined the way Node prints it. */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function redactField<T extends string | undefined>(name: string, value: T, fingerprint: (value: string) => string): T | string {
  return value !== undefined && isSecretName(name) ? fingerprint(value) : value;
}

/** The body with each secret's value replaced, read the way the sandbox's routes read it (src/sandbox/http.ts `bodyFields`). */
function redactBody(text: string, contentType: string | undefined, fingerprint: (value: string) => string): string {
  if (text.trim() === '') return text;
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return redactForm(text, fingerprint);
  if (type === '' || type.includes('json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      const redacted = redactJson(parsed, fingerprint);
      return redacted.changed ? JSON.stringify(redacted.value) : text;
    } catch {
      // Not JSON: falls through to the length alone.
    }
  }
  return `[${Buffer.byteLength(text, 'utf8')} bytes, neither JSON nor a form]`;
}

/** Swaps each secret pair's value in place, so the rest keeps the exact percent-encoding the client chose. */
function redactForm(text: string, fingerprint: (value: string) => string): string {
  return text
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      // Decoded as URLSearchParams decodes, so the fingerprint is of the value the routes read.
      const [[name, value] = ['', '']] = new URLSearchParams(pair);
      return isSecretName(name) ? `${pair.slice(0, equals)}=${encodeURIComponent(fingerprint(value))}` : pair;
    })
    .join('&');
}

/** A copy of a parsed JSON value with each secret field's value fingerprinted, at any depth. */
function redactJson(value: unknown, fingerprint: (value: string) => string): { value: unknown; changed: boolean } {
  if (Array.isArray(value)) {
    const items = value.map((item) => redactJson(item, fingerprint));
    return { value: items.map((item) => item.value), changed: items.some((item) => item.changed) };
  }
  if (typeof value !== 'object' || value === null) return { value, changed: false };
  let changed = false;
  const copy: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (isSecretName(name) && field !== null && field !== undefined) {
      // A secret that is not a string (a numeric PIN, an object) is fingerprinted as its JSON text.
      copy[name] = fingerprint(typeof field === 'string' ? field : JSON.stringify(field));
      changed = true;
    } else {
      const inner = redactJson(field, fingerprint);
      copy[name] = inner.value;
      changed ||= inner.changed;
    }
  }
  return { value: copy, changed };
}
