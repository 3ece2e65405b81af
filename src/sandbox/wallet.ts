import { randomBytes, randomInt } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from './auth.ts';
import { sandboxWalletAccounts, type SandboxWalletAccount } from './data.ts';
import { areaErrorHandler, bodyFields, headerValue, stringField, type SandboxDeps } from './http.ts';

/** Reset codes from op 10 are valid 24 hours (spec, Limits). */
export const RESET_CODE_TTL_MS = 24 * 60 * 60 * 1000;
const MIN_PASSWORD_LENGTH = 8;
// Bounds memory in a long-running sandbox; the oldest session is dropped first.
const MAX_SESSIONS = 10_000;

interface WalletLogin {
  account: SandboxWalletAccount;
  password: string;
}

interface Session {
  email: string;
  accessToken: string;
  refreshToken: string;
}

/** One sandbox's wallet: current passwords, live sessions by either token, pending reset codes. */
interface WalletState {
  deps: SandboxDeps;
  logins: Map<string, WalletLogin>;
  byAccess: Map<string, Session>;
  byRefresh: Map<string, Session>;
  resetCodes: Map<string, { email: string; expiresAt: number }>;
}

function createWalletState(deps: SandboxDeps): WalletState {
  const logins = new Map<string, WalletLogin>();
  for (const account of sandboxWalletAccounts) {
    logins.set(account.email.toLowerCase(), { account, password: account.password });
  }
  return { deps, logins, byAccess: new Map(), byRefresh: new Map(), resetCodes: new Map() };
}

function fail(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).send({ status: false, message });
}

/** Strict base64 of UTF-8 text (op 8 sends email and password so), or undefined. */
function decodeBase64(value: string | undefined): string | undefined {
  if (value === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  // Round-trip so that plain text which merely looks like base64 is not silently accepted.
  if (bytes.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) return undefined;
  return bytes.toString('utf8');
}

function openSession(state: WalletState, email: string, reply: FastifyReply): void {
  const session: Session = {
    email,
    accessToken: randomBytes(32).toString('base64url'),
    refreshToken: randomBytes(32).toString('base64url'),
  };
  state.byAccess.set(session.accessToken, session);
  state.byRefresh.set(session.refreshToken, session);
  for (const oldest of state.byAccess.values()) {
    if (state.byAccess.size <= MAX_SESSIONS) break;
    closeSession(state, oldest);
  }
  reply.header('X-Access-Token', session.accessToken).header('X-Refresh-Token', session.refreshToken);
}

function closeSession(state: WalletState, session: Session): void {
  state.byAccess.delete(session.accessToken);
  state.byRefresh.delete(session.refreshToken);
}

function closeSessionsOf(state: WalletState, email: string): void {
  for (const session of [...state.byAccess.values()]) {
    if (session.email === email) closeSession(state, session);
  }
}

type WalletHandler = (state: WalletState, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Ops 8-12 under `{wallet_url}`: login, logout, forgotten password, reset, token refresh. */
export function walletRoutes(deps: SandboxDeps): FastifyPluginAsync {
  const routes: Record<string, WalletHandler> = {
    '/auth/login': login,
    '/auth/logout': logout,
    '/auth/refresh/token': refreshToken,
    '/auth/password/forget': forgetPassword,
    '/auth/password/reset': resetPassword,
  };
  return async (scope) => {
    const state = createWalletState(deps);
    scope.setErrorHandler(
      areaErrorHandler(deps, (status) => ({ status: false, message: status >= 500 ? 'Something went wrong' : 'Bad request' })),
    );
    for (const [path, handler] of Object.entries(routes)) {
      scope.post(path, (request, reply) => handler(state, request, reply));
    }
  };
}

/** Op 8: base64 email and password in; the user, the merchant and a fresh token pair out. */
async function login(state: WalletState, request: FastifyRequest, reply: FastifyReply) {
  const fields = bodyFields(request);
  if (fields === null) return fail(reply, 400, 'The body must be JSON');
  const email = decodeBase64(stringField(fields, 'email'));
  const password = decodeBase64(stringField(fields, 'password'));
  if (email === undefined || password === undefined) {
    return fail(reply, 400, 'email and password are required, base64-encoded');
  }
  const known = state.logins.get(email.toLowerCase());
  // Compare a password even for an unknown e-mail, so timing does not reveal which exist.
  const passwordOk = safeEqual(password, known?.password ?? '\u0000');
  if (known === undefined || !passwordOk) return fail(reply, 401, 'Invalid email or password');
  openSession(state, known.account.email.toLowerCase(), reply);
  return { status: true, data: { ...known.account.user }, merchant: { ...known.account.merchant } };
}

/** Op 9: both tokens of one live session end it. */
async function logout(state: WalletState, request: FastifyRequest, reply: FastifyReply) {
  const session = state.byAccess.get(headerValue(request, 'x-access-token') ?? '');
  if (session === undefined || session.refreshToken !== headerValue(request, 'x-refresh-token')) {
    return fail(reply, 401, 'Invalid or expired session tokens');
  }
  closeSession(state, session);
  return reply.code(200).send(); // the spec: 200, no body
}

/** Op 12: a refresh token buys a new pair. */
async function refreshToken(state: WalletState, request: FastifyRequest, reply: FastifyReply) {
  const session = state.byRefresh.get(headerValue(request, 'x-refresh-token') ?? '');
  if (session === undefined) return fail(reply, 401, 'Invalid or expired refresh token');
  // Rotation: the old pair stops working the moment the new one is issued.
  closeSession(state, session);
  openSession(state, session.email, reply);
  return { status: true, message: 'Session refreshed' };
}

/** Op 10: issues a reset code to a registered address. */
async function forgetPassword(state: WalletState, request: FastifyRequest, reply: FastifyReply) {
  const fields = bodyFields(request);
  const email = fields === null ? undefined : stringField(fields, 'email');
  if (email === undefined || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    return fail(reply, 400, 'A valid email is required');
  }
  const login = state.logins.get(email.toLowerCase());
  if (login !== undefined) issueResetCode(state, login);
  // The same answer for every address, so the endpoint does not reveal which are registered.
  return { status: true, message: 'If the email is registered, a reset code has been sent to it. It expires in 24 hours.' };
}

/** Op 11: a live reset code sets a new password and signs the user out everywhere. */
async function resetPassword(state: WalletState, request: FastifyRequest, reply: FastifyReply) {
  const fields = bodyFields(request);
  if (fields === null) return fail(reply, 400, 'The body must be JSON');
  const resetCode = stringField(fields, 'resetCode');
  const password = stringField(fields, 'password');
  if (resetCode === undefined || password === undefined) return fail(reply, 400, 'resetCode and password are required');
  const pending = state.resetCodes.get(resetCode);
  const login = pending === undefined ? undefined : state.logins.get(pending.email);
  if (pending === undefined || login === undefined || pending.expiresAt <= state.deps.now()) {
    return fail(reply, 400, 'Invalid or expired reset code');
  }
  if (password.length < MIN_PASSWORD_LENGTH) {
    return fail(reply, 400, `The password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  login.password = password;
  state.resetCodes.delete(resetCode);
  closeSessionsOf(state, pending.email);
  return { status: true, message: 'Your password has been reset' };
}

/** Issues the account's reset code, replacing any earlier one: its fixed code, else six random digits. */
function issueResetCode(state: WalletState, login: WalletLogin): void {
  const email = login.account.email.toLowerCase();
  const now = state.deps.now();
  for (const [code, pending] of state.resetCodes) {
    if (pending.email === email || pending.expiresAt <= now) state.resetCodes.delete(code);
  }
  const code = login.account.resetCode ?? unusedRandomCode(state);
  state.resetCodes.set(code, { email, expiresAt: now + RESET_CODE_TTL_MS });
}

function unusedRandomCode(state: WalletState): string {
  for (;;) {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    if (!state.resetCodes.has(code)) return code;
  }
}
