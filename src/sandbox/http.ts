import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/** What every area of one sandbox instance shares: its clock and its logger. */
export interface SandboxDeps {
  /** Milliseconds since the epoch; injectable so tests can expire codes without patching Date. */
  now: () => number;
  logger: Logger | undefined;
}

/** Named fields of a request body. */
export type Fields = Record<string, unknown>;

/** One request header's value; a repeated header is joined the way Node prints it. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The query string, read from the raw URL so every area parses it alike. */
export function searchParams(request: FastifyRequest): URLSearchParams {
  const at = request.url.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
}

/** The body exactly as received (the sandbox's one content-type parser keeps it as text). */
export function rawBody(request: FastifyRequest): string {
  return typeof request.body === 'string' ? request.body : '';
}

/** The body as fields: a JSON object or a form; `{}` when empty; `null` when it cannot be read. */
export function bodyFields(request: FastifyRequest): Fields | null {
  const text = rawBody(request);
  if (text.trim() === '') return {};
  const type = (headerValue(request, 'content-type') ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  if (type !== '' && !type.includes('json')) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Fields) : null;
  } catch {
    return null;
  }
}

/** A non-empty string field, or undefined (absent, empty or not a string all count as missing). */
export function stringField(fields: Fields, name: string): string | undefined {
  const value = fields[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Whether the client asked for JSON (an API client) rather than a page (a browser). */
export function acceptsJson(request: FastifyRequest): boolean {
  return /application\/(?:[\w.+-]*\+)?json/i.test(headerValue(request, 'accept') ?? '');
}

/**
 * An error handler answering in an area's own failure body: a 4xx raised by Fastify (body too
 * large, bad media type) keeps its status, anything else is that area's 500.
 */
export function areaErrorHandler(deps: SandboxDeps, failureBody: (statusCode: number) => unknown) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) deps.logger?.warn({ err: error, path: request.url.split('?')[0] }, 'bank sandbox failed a request');
    return reply.code(status).send(failureBody(status));
  };
}
