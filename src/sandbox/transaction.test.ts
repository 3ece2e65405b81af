import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { basic, call, useSandbox, type Answer } from '../../test/helpers/sandbox.ts';
import { CODE_TTL_MS } from './transaction.ts';

let now = Date.parse('2026-03-02T10:00:00Z');
const sandbox = useSandbox({ now: () => now });

const { oauthClientId, oauthClientSecret } = sandboxCredentials;
const redirectUri = 'https://merchant.example.ng/oauth/callback';
const form = { 'content-type': 'application/x-www-form-urlencoded' };

function authorize(params: Record<string, string>, accept = 'application/json'): Promise<Answer> {
  const query = new URLSearchParams(params).toString();
  return call(`${sandbox().urls.base}/transaction/oauth/authorize/?${query}`, { headers: { ...form, accept } });
}

async function issueCode(uri = redirectUri): Promise<string> {
  const { json } = await authorize({ response_type: 'code', client_id: oauthClientId, redirect_uri: uri });
  return json.code;
}

function exchange(fields: Record<string, string>, authorization = basic(oauthClientId, oauthClientSecret)): Promise<Answer> {
  return call(`${sandbox().urls.gateway}/transaction/oauth/authorize/`, {
    method: 'POST',
    headers: { ...form, accept: 'application/json', authorization },
    body: new URLSearchParams(fields).toString(),
  });
}

const grant = (code: string, uri = redirectUri) => ({
  grant_type: 'authorization_code',
  client_id: oauthClientId,
  code,
  redirect_uri: uri,
});

describe('op 4, authorization code', () => {
  it('answers JSON {code, redirect_uri, expires_in} to a client that accepts JSON', async () => {
    const { status, json } = await authorize({ response_type: 'code', client_id: oauthClientId, redirect_uri: redirectUri });
    expect(status).toBe(200);
    expect(json).toEqual({ code: expect.stringMatching(/^[\w-]{20,}$/), redirect_uri: redirectUri, expires_in: 600 });
  });

  it('redirects a browser with 302 to redirect_uri carrying the code and state', async () => {
    const { status, headers } = await authorize(
      { response_type: 'code', client_id: oauthClientId, redirect_uri: `${redirectUri}?shop=12`, state: 'xyz' },
      'text/html,application/xhtml+xml,*/*;q=0.8',
    );
    expect(status).toBe(302);
    const location = new URL(String(headers.location));
    expect(location.origin + location.pathname).toBe(redirectUri);
    expect(location.searchParams.get('shop')).toBe('12');
    expect(location.searchParams.get('code')).toMatch(/^[\w-]{20,}$/);
    expect(location.searchParams.get('state')).toBe('xyz');
  });

  it('reads its fields from a form body as well as from the query', async () => {
    const body = new URLSearchParams({ response_type: 'code', client_id: oauthClientId, redirect_uri: redirectUri }).toString();
    const { status, json } = await call(`${sandbox().urls.base}/transaction/oauth/authorize/`, {
      headers: { ...form, accept: 'application/json' },
      body,
    });
    expect(status).toBe(200);
    expect(json.redirect_uri).toBe(redirectUri);
  });

  it('answers 401 invalid_client to an unknown client_id', async () => {
    const { status, json } = await authorize({ response_type: 'code', client_id: 'stranger', redirect_uri: redirectUri });
    expect(status).toBe(401);
    expect(json.error).toBe('invalid_client');
  });

  it.each([
    ['a missing response_type', { client_id: oauthClientId, redirect_uri: redirectUri }],
    ['response_type=token', { response_type: 'token', client_id: oauthClientId, redirect_uri: redirectUri }],
    ['a missing redirect_uri', { response_type: 'code', client_id: oauthClientId }],
    ['a relative redirect_uri', { response_type: 'code', client_id: oauthClientId, redirect_uri: '/callback' }],
    ['a non-http redirect_uri', { response_type: 'code', client_id: oauthClientId, redirect_uri: 'ftp://example.ng/cb' }],
  ])('answers 400 invalid_request to %s', async (_name, params) => {
    const { status, json } = await authorize(params);
    expect(status).toBe(400);
    expect(json.error).toBe('invalid_request');
  });
});

describe('op 5, token exchange', () => {
  it('exchanges a code for an RFC 6749 token response', async () => {
    const { status, headers, json } = await exchange(grant(await issueCode()));
    expect(status).toBe(200);
    expect(headers['cache-control']).toBe('no-store');
    expect(json).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      scope: 'transactions',
    });
  });

  it('accepts a code only once', async () => {
    const code = await issueCode();
    expect((await exchange(grant(code))).status).toBe(200);
    const again = await exchange(grant(code));
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
  });

  it('refuses a redirect_uri other than the one the code was issued for', async () => {
    const code = await issueCode();
    const { status, json } = await exchange(grant(code, 'https://attacker.example/cb'));
    expect(status).toBe(400);
    expect(json).toEqual({ error: 'invalid_grant', error_description: expect.stringContaining('redirect_uri') });
  });

  it('refuses a code older than 10 minutes', async () => {
    const code = await issueCode();
    now += CODE_TTL_MS;
    const { status, json } = await exchange(grant(code));
    expect(status).toBe(400);
    expect(json.error).toBe('invalid_grant');
  });

  it('refuses a code it never issued', async () => {
    const { status, json } = await exchange(grant('made-up-code'));
    expect(status).toBe(400);
    expect(json.error).toBe('invalid_grant');
  });

  it.each([
    ['no Authorization', undefined],
    ['a wrong secret', basic(oauthClientId, 'wrong-secret')],
    ['another client', basic('stranger', oauthClientSecret)],
    ['a Bearer header', `Bearer ${oauthClientSecret}`],
  ])('answers 401 invalid_client to %s', async (_name, authorization) => {
    const code = await issueCode();
    const { status, headers, json } = await call(`${sandbox().urls.gateway}/transaction/oauth/authorize/`, {
      method: 'POST',
      headers: { ...form, ...(authorization === undefined ? {} : { authorization }) },
      body: new URLSearchParams(grant(code)).toString(),
    });
    expect(status).toBe(401);
    expect(headers['www-authenticate']).toMatch(/^Basic /);
    expect(json.error).toBe('invalid_client');
  });

  it('answers 400 unsupported_grant_type to another grant type', async () => {
    const { status, json } = await exchange({ ...grant(await issueCode()), grant_type: 'client_credentials' });
    expect(status).toBe(400);
    expect(json.error).toBe('unsupported_grant_type');
  });

  it('answers 400 invalid_request when the code is missing', async () => {
    const { status, json } = await exchange({ grant_type: 'authorization_code', redirect_uri: redirectUri });
    expect(status).toBe(400);
    expect(json.error).toBe('invalid_request');
  });

  it('is served at the gateway prefix only', async () => {
    const { status } = await call(`${sandbox().urls.base}/transaction/oauth/authorize/`, {
      method: 'POST',
      headers: { ...form, authorization: basic(oauthClientId, oauthClientSecret) },
      body: new URLSearchParams(grant(await issueCode())).toString(),
    });
    expect(status).toBe(404);
  });
});
