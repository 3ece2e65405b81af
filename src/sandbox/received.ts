// What the sandbox bank keeps of each request, for tests of the wire format: everything a client
// chose (method, path, query, headers, body, and which credentials it sent) but no credential's value.
// The sandbox is handed real-looking passwords, tokens and codes (the caller's own, in wallet and
// OAuth calls), and a test failure or a debugger prints whatever `received` holds.
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { headerValue } from './http.ts';

/** One request as the sandbox bank received it, each secret's value replaced by its fingerprint. */
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

export interface RequestLog {
  /** Every request received, oldest first (the last `limit`). */
  received: ReceivedRequest[];
  /**
   * What `received` shows in place of `value` when it is a secret: a keyed hash, so a test proves the
   * right credential was sent while a dump of `received` cannot be matched against guesses.
   */
  fingerprint(value: string): string;
}

/** Names (lower case, letters and digits only) that hold a credential in a header, a query or a body. */
const SECRET_NAMES = new Set(['authorization', 'proxyauthorization', 'cookie', 'code', 'pin', 'otp']);
/** Endings that mark the rest: `password`, `client_secret`, `x-refresh-token`, `resetCode`, `x-api-key`. */
const SECRET_ENDINGS = ['password', 'secret', 'token', 'resetcode', 'apikey', 'signature'];

/** Whether a header, query or body field of this name carries a secret. */
export function isSecretName(name: string): boolean {
  const plain = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_NAMES.has(plain) || SECRET_ENDINGS.some((ending) => plain.endsWith(ending));
}

/**
 * Records every request on `app` in arrival order, redacted as it is recorded; the body is filled
 * in once read (before any route runs).
 */
export function recordRequests(app: FastifyInstance, limit: number): RequestLog {
  // A fresh key per sandbox: fingerprints mean nothing outside the instance that made them.
  const key = randomBytes(32);
  const fingerprint = (value: string) => `[redacted ${createHmac('sha256', key).update(value).digest('hex').slice(0, 16)}]`;
  const received: ReceivedRequest[] = [];
  const entries = new WeakMap<FastifyRequest, ReceivedRequest>();

  app.addHook('onRequest', async (request) => {
    const at = request.url.indexOf('?');
    const headers: Record<string, string | undefined> = {};
    for (const name of Object.keys(request.headers)) headers[name] = redactField(name, headerValue(request, name), fingerprint);
    const query: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1))) query[name] = redactField(name, value, fingerprint);
    const entry: ReceivedRequest = { method: request.method, path: at === -1 ? request.url : request.url.slice(0, at), query, headers, body: '' };
    entries.set(request, entry);
    received.push(entry);
    if (received.length > limit) received.splice(0, received.length - limit);
  });
  app.addHook('preValidation', async (request) => {
    const entry = entries.get(request);
    if (entry !== undefined && typeof request.body === 'string') entry.body = redactBody(request.body, headerValue(request, 'content-type'), fingerprint);
  });
  return { received, fingerprint };
}

function redactField<T extends string | undefined>(name: string, value: T, fingerprint: (value: string) => string): T | string {
  return value !== undefined && isSecretName(name) ? fingerprint(value) : value;
}

/** The body with each secret's value replaced, read the way the sandbox's routes read it (http.ts `bodyFields`). */
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
