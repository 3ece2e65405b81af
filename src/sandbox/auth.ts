import type { FastifyRequest } from 'fastify';
import { Secret } from '../secret.ts';
import { sandboxCredentials } from './credentials.ts';
import { headerValue, stringField, type Fields } from './http.ts';

/**
 * Whether a received credential equals the expected one, in constant time (`Secret.equals`), so the
 * time reveals neither the value nor its length.
 */
export function safeEqual(received: string | undefined, expected: string): boolean {
  const same = new Secret(expected).equals(received ?? '');
  return same && received !== undefined;
}

/** Account area (ops 1-3): Authorization holds the token exactly, plus Username and Password. */
export function accountHeadersValid(request: FastifyRequest): boolean {
  // Every comparison runs, so which one failed does not show in the timing.
  const token = safeEqual(headerValue(request, 'authorization'), sandboxCredentials.apiToken);
  const username = safeEqual(headerValue(request, 'username'), sandboxCredentials.username);
  const password = safeEqual(headerValue(request, 'password'), sandboxCredentials.password);
  return token && username && password;
}

/** The user and password of a Basic Authorization header: base64 of UTF-8, split at the first colon. */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/_-]+={0,2}) *$/i.exec(header ?? '');
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Whether the request's Basic credentials are exactly `username` and `password`. */
export function basicValid(request: FastifyRequest, username: string, password: string): boolean {
  const given = parseBasic(headerValue(request, 'authorization'));
  const user = safeEqual(given?.username, username);
  const pass = safeEqual(given?.password, password);
  return user && pass;
}

/** Posting area (op 13): `userName` and `password` in the body are the only credential. */
export function postingCredentialsValid(fields: Fields): boolean {
  const user = safeEqual(stringField(fields, 'userName'), sandboxCredentials.postingUsername);
  const pass = safeEqual(stringField(fields, 'password'), sandboxCredentials.postingPassword);
  return user && pass;
}
