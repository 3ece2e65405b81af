import { describe, expect, it } from 'vitest';
import { sandboxMerchant } from './data.ts';
import { b64, call, postJson, startSandbox, useSandbox, type Answer } from '../../test/helpers/sandbox.ts';
import { RESET_CODE_TTL_MS } from './wallet.ts';

let now = Date.parse('2026-03-02T10:00:00Z');
const sandbox = useSandbox({ now: () => now });

const { email, password } = sandboxMerchant;

function login(user = email, secret = password, url = sandbox().urls.wallet): Promise<Answer> {
  return postJson(`${url}/auth/login`, { email: b64(user), password: b64(secret) });
}

async function tokens(): Promise<{ access: string; refresh: string }> {
  const { headers } = await login();
  return { access: String(headers['x-access-token']), refresh: String(headers['x-refresh-token']) };
}

const logout = (access: string, refresh: string) =>
  call(`${sandbox().urls.wallet}/auth/logout`, {
    method: 'POST',
    headers: { 'x-access-token': access, 'x-refresh-token': refresh },
  });
const refresh = (token: string) =>
  call(`${sandbox().urls.wallet}/auth/refresh/token`, { method: 'POST', headers: { 'x-refresh-token': token } });
const forget = (address: string) => postJson(`${sandbox().urls.wallet}/auth/password/forget`, { email: address });
const reset = (resetCode: string, newPassword: string) =>
  postJson(`${sandbox().urls.wallet}/auth/password/reset`, { resetCode, password: newPassword });

describe('op 8, login', () => {
  it('answers the user and merchant with the tokens in X-Access-Token and X-Refresh-Token', async () => {
    const { status, headers, json } = await login();
    expect(status).toBe(200);
    expect(headers['x-access-token']).toMatch(/^[\w-]{32,}$/);
    expect(headers['x-refresh-token']).toMatch(/^[\w-]{32,}$/);
    expect(headers['x-access-token']).not.toBe(headers['x-refresh-token']);
    expect(json).toEqual({ status: true, data: sandboxMerchant.user, merchant: sandboxMerchant.merchant });
    expect(json.merchant).toMatchObject({ businessName: 'Adaeze Foods Ltd', mode: 'SANDBOX', review: 'PENDING', owner: true });
    expect(json.data.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it.each([
    ['a wrong password', email, 'Wrong#2026'],
    ['an unknown email', 'nobody@sandbox.ng', password],
  ])('answers 401 {status:false} to %s', async (_name, user, secret) => {
    const { status, headers, json } = await login(user, secret);
    expect(status).toBe(401);
    expect(headers['x-access-token']).toBeUndefined();
    expect(json).toEqual({ status: false, message: expect.any(String) });
  });

  it('answers 400 to an email and password that are not base64', async () => {
    const { status, json } = await postJson(`${sandbox().urls.wallet}/auth/login`, { email, password });
    expect(status).toBe(400);
    expect(json.status).toBe(false);
  });
});

describe('op 9, logout', () => {
  it('answers 200 with no body and invalidates both tokens', async () => {
    const { access, refresh: refreshToken } = await tokens();
    const answer = await logout(access, refreshToken);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('');
    expect((await logout(access, refreshToken)).status).toBe(401);
    expect((await refresh(refreshToken)).status).toBe(401);
  });

  it('leaves other sessions of the same user alone', async () => {
    const first = await tokens();
    const second = await tokens();
    await logout(first.access, first.refresh);
    expect((await refresh(second.refresh)).status).toBe(200);
  });

  it.each([
    ['no tokens', '', ''],
    ['unknown tokens', 'made-up', 'made-up-too'],
  ])('answers 401 {status:false} to %s', async (_name, access, refreshToken) => {
    const { status, json } = await logout(access, refreshToken);
    expect(status).toBe(401);
    expect(json).toEqual({ status: false, message: expect.any(String) });
  });

  it('answers 401 to tokens from two different sessions', async () => {
    const first = await tokens();
    const second = await tokens();
    expect((await logout(first.access, second.refresh)).status).toBe(401);
  });
});

describe('op 12, refresh', () => {
  it('rotates the pair: new tokens work, the old pair stops working', async () => {
    const old = await tokens();
    const answer = await refresh(old.refresh);
    expect(answer.status).toBe(200);
    const access = String(answer.headers['x-access-token']);
    const refreshToken = String(answer.headers['x-refresh-token']);
    expect(access).toMatch(/^[\w-]{32,}$/);
    expect([access, refreshToken]).not.toContain(old.access);
    expect(refreshToken).not.toBe(old.refresh);
    expect((await refresh(old.refresh)).status).toBe(401);
    expect((await logout(old.access, old.refresh)).status).toBe(401);
    expect((await logout(access, refreshToken)).status).toBe(200);
  });

  it('answers 401 {status:false} to an unknown or missing refresh token', async () => {
    const unknown = await refresh('made-up');
    expect(unknown.status).toBe(401);
    expect(unknown.json.status).toBe(false);
    const missing = await call(`${sandbox().urls.wallet}/auth/refresh/token`, { method: 'POST' });
    expect(missing.status).toBe(401);
  });
});

describe('ops 10-11, password reset', () => {
  it('resets the password with the code from a forgot-password request', async () => {
    const forgot = await forget(email);
    expect(forgot.status).toBe(200);
    expect(forgot.json).toEqual({ status: true, message: expect.any(String) });
    const answer = await reset('482913', 'NewSandbox#2027');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ status: true, message: expect.any(String) });
    expect((await login(email, password)).status).toBe(401);
    expect((await login(email, 'NewSandbox#2027')).status).toBe(200);
  });

  it('accepts a reset code once', async () => {
    await forget(email);
    expect((await reset('482913', 'NewSandbox#2027')).status).toBe(200);
    expect((await reset('482913', 'Another#2028')).status).toBe(400);
  });

  it('signs the user out of existing sessions on reset', async () => {
    const session = await tokens();
    await forget(email);
    await reset('482913', 'NewSandbox#2027');
    expect((await refresh(session.refresh)).status).toBe(401);
  });

  it('refuses the code without a prior forgot-password request', async () => {
    const { status, json } = await reset('482913', 'NewSandbox#2027');
    expect(status).toBe(400);
    expect(json).toEqual({ status: false, message: expect.any(String) });
  });

  it('refuses the code 24 hours after it was issued', async () => {
    await forget(email);
    now += RESET_CODE_TTL_MS;
    expect((await reset('482913', 'NewSandbox#2027')).status).toBe(400);
    expect((await login()).status).toBe(200);
  });

  it('answers an unknown address exactly as a known one, and issues no code for it', async () => {
    const known = await forget(email);
    const unknown = await forget('nobody@sandbox.ng');
    expect(unknown.status).toBe(200);
    expect(unknown.json).toEqual(known.json);
  });

  it('answers 400 to a malformed email', async () => {
    const { status, json } = await forget('not-an-email');
    expect(status).toBe(400);
    expect(json.status).toBe(false);
  });

  it('keeps each sandbox instance its own passwords', async () => {
    await forget(email);
    await reset('482913', 'NewSandbox#2027');
    const other = await startSandbox();
    expect((await login(email, password, other.urls.wallet)).status).toBe(200);
  });
});
