import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { basicValid, safeEqual } from './auth.ts';
import { sandboxCredentials } from './credentials.ts';
import { acceptsJson, areaErrorHandler, bodyFields, searchParams, stringField, type Fields, type SandboxDeps } from './http.ts';

/** Authorization codes live 10 minutes (RFC 6749 §4.1.2 recommends at most that). */
export const CODE_TTL_MS = 10 * 60 * 1000;
const ACCESS_TOKEN_TTL_S = 3600;
// Bounds memory in a long-running sandbox; a code that falls out is simply unknown.
const MAX_CODES = 10_000;

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  expiresAt: number;
}

/** The OAuth state of one sandbox: codes issued by op 4 and not yet redeemed by op 5. */
export interface OAuthState {
  deps: SandboxDeps;
  codes: Map<string, IssuedCode>;
}

/** A fresh, empty OAuth state for one sandbox instance. */
export function createOAuthState(deps: SandboxDeps): OAuthState {
  return { deps, codes: new Map() };
}

function oauthError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description });
}

function oauthFailure(status: number): { error: string } {
  return { error: status >= 500 ? 'server_error' : 'invalid_request' };
}

function isAbsoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === '';
  } catch {
    return false;
  }
}

function issueCode(state: OAuthState, clientId: string, redirectUri: string): string {
  const now = state.deps.now();
  for (const [code, issued] of state.codes) {
    if (issued.expiresAt <= now || state.codes.size >= MAX_CODES) state.codes.delete(code);
  }
  const code = randomBytes(24).toString('base64url');
  state.codes.set(code, { clientId, redirectUri, expiresAt: now + CODE_TTL_MS });
  return code;
}

/** Op 4's parameters: the query string, or a form body when the query does not carry them. */
function authorizeParams(request: FastifyRequest): (name: string) => string | undefined {
  const query = searchParams(request);
  const form = bodyFields(request) ?? {};
  return (name) => query.get(name) || stringField(form, name);
}

/** Op 4 under `{base_url}`: `GET /transaction/oauth/authorize/` issues an authorization code. */
export function authorizeRoutes(state: OAuthState): FastifyPluginAsync {
  return async (scope) => {
    scope.setErrorHandler(areaErrorHandler(state.deps, oauthFailure));
    scope.get('/transaction/oauth/authorize/', async (request, reply) => {
      const param = authorizeParams(request);
      const clientId = param('client_id');
      if (clientId === undefined) return oauthError(reply, 400, 'invalid_request', 'client_id is required');
      if (!safeEqual(clientId, sandboxCredentials.oauthClientId)) {
        return oauthError(reply, 401, 'invalid_client', 'Unknown client_id');
      }
      const redirectUri = param('redirect_uri');
      if (redirectUri === undefined || !isAbsoluteHttpUrl(redirectUri)) {
        return oauthError(reply, 400, 'invalid_request', 'redirect_uri must be an absolute http(s) URL');
      }
      if (param('response_type') !== 'code') {
        return oauthError(reply, 400, 'invalid_request', 'response_type must be "code"');
      }
      const code = issueCode(state, clientId, redirectUri);
      const stateParam = param('state');
      if (acceptsJson(request)) {
        const body = { code, redirect_uri: redirectUri, expires_in: CODE_TTL_MS / 1000 };
        return reply.header('cache-control', 'no-store').send(stateParam === undefined ? body : { ...body, state: stateParam });
      }
      // A browser goes back to the client with the code, as RFC 6749 §4.1.2 describes.
      const location = new URL(redirectUri);
      location.searchParams.set('code', code);
      if (stateParam !== undefined) location.searchParams.set('state', stateParam);
      return reply.redirect(location.toString(), 302);
    });
  };
}

interface OAuthProblem {
  status: number;
  error: string;
  description: string;
}

/** Checks op 5's form after client authentication and redeems the code; what is wrong, if anything. */
function redeemCode(state: OAuthState, form: Fields): OAuthProblem | undefined {
  const grantType = stringField(form, 'grant_type');
  if (grantType === undefined) return { status: 400, error: 'invalid_request', description: 'grant_type is required' };
  if (grantType !== 'authorization_code') {
    return { status: 400, error: 'unsupported_grant_type', description: 'Only grant_type=authorization_code is supported' };
  }
  const code = stringField(form, 'code');
  const redirectUri = stringField(form, 'redirect_uri');
  if (code === undefined || redirectUri === undefined) {
    return { status: 400, error: 'invalid_request', description: 'code and redirect_uri are required' };
  }
  const issued = state.codes.get(code);
  if (issued === undefined || issued.expiresAt <= state.deps.now() || issued.clientId !== sandboxCredentials.oauthClientId) {
    return { status: 400, error: 'invalid_grant', description: 'The authorization code is invalid, expired or already used' };
  }
  if (issued.redirectUri !== redirectUri) {
    return { status: 400, error: 'invalid_grant', description: 'redirect_uri does not match the one the code was issued for' };
  }
  state.codes.delete(code); // single use
  return undefined;
}

/** Op 5 under `{gateway_url}`: `POST /transaction/oauth/authorize/` exchanges a code for tokens. */
export function tokenRoutes(state: OAuthState): FastifyPluginAsync {
  return async (scope) => {
    scope.setErrorHandler(areaErrorHandler(state.deps, oauthFailure));
    scope.post('/transaction/oauth/authorize/', async (request, reply) => {
      const { oauthClientId, oauthClientSecret } = sandboxCredentials;
      if (!basicValid(request, oauthClientId, oauthClientSecret)) {
        reply.header('www-authenticate', 'Basic realm="oauth"');
        return oauthError(reply, 401, 'invalid_client', 'Client authentication failed');
      }
      const form = bodyFields(request);
      if (form === null) return oauthError(reply, 400, 'invalid_request', 'The body must be a form');
      // A client_id in the form must name the client that authenticated.
      const formClientId = stringField(form, 'client_id');
      if (formClientId !== undefined && formClientId !== oauthClientId) {
        return oauthError(reply, 401, 'invalid_client', 'client_id does not match the authenticated client');
      }
      const problem = redeemCode(state, form);
      if (problem !== undefined) return oauthError(reply, problem.status, problem.error, problem.description);
      return reply
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
        .send({
          access_token: randomBytes(32).toString('base64url'),
          token_type: 'Bearer',
          expires_in: ACCESS_TOKEN_TTL_S,
          refresh_token: randomBytes(32).toString('base64url'),
          scope: 'transactions',
        });
    });
  };
}
