import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { b64, lastReceived, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import { createTestClients, expectUpstreamError, sandboxBankCredentials, urlsAt } from '../../test/helpers/bank-clients.ts';

const MERCHANT = { email: 'merchant@sandbox.ng', password: 'Sandbox#2026' };
const CALLER_SECRETS = [MERCHANT.password, 'wrong-Pässword:1'];

// Timestamps: with Z, without an offset, with +01:00, unreadable.
const user = { id: 'u-1', email: 'a@b.ng', createdAt: '2025-11-03T09:14:27.512Z', updatedAt: '2025-11-03T09:14:27' };
const merchant = {
  id: 'm-1',
  mode: 'SANDBOX',
  review: 'PENDING',
  owner: true,
  createdAt: '2026-01-15T17:42:08+01:00',
  updatedAt: 'yesterday',
};

describe('wallet client, odd answers', () => {
  it("maps a 401 to the caller's credentials to UPSTREAM_REJECTED with the bank's message", async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(401).json({ status: false, message: 'Invalid email or password' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(
      clients.wallet.login({ email: MERCHANT.email, password: 'wrong-Pässword:1' }),
      'UPSTREAM_REJECTED',
      CALLER_SECRETS,
    );
    expect(error.extensions).toEqual({ code: 'UPSTREAM_REJECTED', responseMessage: 'Invalid email or password' });
  });

  it('maps a 200 saying status false to UPSTREAM_REJECTED', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ status: false, message: 'Account locked' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.wallet.forgotPassword(MERCHANT.email), 'UPSTREAM_REJECTED');
    expect(error.extensions.responseMessage).toBe('Account locked');
  });

  it('calls a login without token headers an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ status: true, data: user, merchant }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.wallet.login(MERCHANT), 'UPSTREAM_INVALID_RESPONSE', CALLER_SECRETS);
  });

  it('calls a refresh without new token headers an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.text(''));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.wallet.refreshSession('r-1'), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('keeps timestamps with an offset and turns ones without, or unreadable ones, into null', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.header('x-access-token', 'a-1').header('x-refresh-token', 'r-1').json({ status: true, data: user, merchant }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    const session = await clients.wallet.login(MERCHANT);
    expect(session.user).toMatchObject({ createdAt: '2025-11-03T09:14:27.512Z', updatedAt: null });
    expect(session.merchant).toMatchObject({ createdAt: '2026-01-15T17:42:08+01:00', updatedAt: null, owner: true });
  });

  it('accepts any body, or none, on logout', async () => {
    const bank = await startFakeBank((_request, reply) => reply.text('OK'));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.wallet.logout({ accessToken: 'a', refreshToken: 'r' })).resolves.toBeUndefined();
  });

  it('refuses a caller token the HTTP layer cannot send, without calling the bank', async () => {
    const bank = await startFakeBank((_request, reply) => reply.text(''));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.wallet.refreshSession('r-1\r\nX-Evil: 1'), 'UPSTREAM_REJECTED');
    expect(bank.received).toHaveLength(0);
  });
});

describe('wallet client against the sandbox (ops 8-12)', () => {
  const sandbox = useRecordedSandbox();
  const clientsFor = () => createTestClients(sandbox().urls, { credentials: sandboxBankCredentials }).clients;

  it('op 8: sends base64 email and password as JSON and maps the session', async () => {
    const session = await clientsFor().wallet.login(MERCHANT);
    expect(session.accessToken).not.toBe('');
    expect(session.refreshToken).not.toBe('');
    expect(session.user).toMatchObject({ id: expect.any(String), email: MERCHANT.email, role: 'admin' });
    expect(session.user.createdAt).toBe('2025-11-03T09:14:27.512Z');
    expect(session.merchant).toMatchObject({ mode: 'SANDBOX', review: 'PENDING', owner: true, businessName: expect.any(String) });

    const request = lastReceived(sandbox(), '/auth/login');
    expect(request).toMatchObject({ method: 'POST', path: '/wallet/auth/login' });
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({
      email: b64(MERCHANT.email),
      password: sandbox().fingerprint(b64(MERCHANT.password)),
    });
  });

  it('op 8: a wrong password is UPSTREAM_REJECTED with the bank message', async () => {
    const error = await expectUpstreamError(
      clientsFor().wallet.login({ email: MERCHANT.email, password: 'wrong-Pässword:1' }),
      'UPSTREAM_REJECTED',
      CALLER_SECRETS,
    );
    expect(error.extensions.responseMessage).toEqual(expect.any(String));
  });

  it('op 12: refreshes with X-Refresh-Token; the old pair is then refused', async () => {
    const clients = clientsFor();
    const session = await clients.wallet.login(MERCHANT);
    const tokens = await clients.wallet.refreshSession(session.refreshToken);
    expect(tokens.accessToken).not.toBe(session.accessToken);
    expect(tokens.refreshToken).not.toBe(session.refreshToken);
    const request = lastReceived(sandbox(), '/auth/refresh/token');
    expect(request).toMatchObject({ method: 'POST', path: '/wallet/auth/refresh/token', body: '' });
    expect(request.headers['x-refresh-token']).toBe(sandbox().fingerprint(session.refreshToken));
    await expectUpstreamError(clients.wallet.refreshSession(session.refreshToken), 'UPSTREAM_REJECTED', [session.refreshToken]);
  });

  it('op 9: logs out with both token headers; a second logout is refused', async () => {
    const clients = clientsFor();
    const { accessToken, refreshToken } = await clients.wallet.login(MERCHANT);
    await clients.wallet.logout({ accessToken, refreshToken });
    const request = lastReceived(sandbox(), '/auth/logout');
    expect(request).toMatchObject({ method: 'POST', path: '/wallet/auth/logout', body: '' });
    expect(request.headers).toMatchObject({
      'x-access-token': sandbox().fingerprint(accessToken),
      'x-refresh-token': sandbox().fingerprint(refreshToken),
    });
    await expectUpstreamError(clients.wallet.logout({ accessToken, refreshToken }), 'UPSTREAM_REJECTED', [accessToken, refreshToken]);
  });

  it('ops 10-11: sends a reset code, resets the password with it, and the new one signs in', async () => {
    const bank = sandbox(); // each test has its own, so changing the merchant's password stays here
    const clients = clientsFor();

    await expect(clients.wallet.forgotPassword(MERCHANT.email)).resolves.toMatchObject({ status: true });
    expect(JSON.parse(lastReceived(bank, '/auth/password/forget').body)).toEqual({ email: MERCHANT.email });

    const reset = { resetCode: '482913', password: 'N3w-Pässword!' };
    await expect(clients.wallet.resetPassword(reset)).resolves.toMatchObject({ status: true, message: expect.any(String) });
    const request = lastReceived(bank, '/auth/password/reset');
    expect(request.path).toBe('/wallet/auth/password/reset');
    expect(JSON.parse(request.body)).toEqual({ resetCode: bank.fingerprint(reset.resetCode), password: bank.fingerprint(reset.password) });

    await expect(clients.wallet.login({ email: MERCHANT.email, password: reset.password })).resolves.toBeDefined();
    await expectUpstreamError(clients.wallet.resetPassword(reset), 'UPSTREAM_REJECTED', [reset.password]);
  });
});
