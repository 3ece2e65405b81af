import { describe, expect, it } from 'vitest';
import { problemsOf } from '../../test/helpers/config.ts';
import { loadConfig } from './index.ts';

const ISSUER = {
  AUTH_JWKS_URL: 'https://issuer.test/.well-known/jwks.json',
  AUTH_ISSUER: 'https://issuer.test',
  AUTH_AUDIENCE: 'bank-subgraph',
};
/** What the settings come to beside the variables: the JWKS's default max age, and the development key allowed. */
const SANDBOX_DEFAULTS = { keysMaxAgeMs: 600_000, refuseDevelopmentKey: false };
const PRODUCTION = {
  NODE_ENV: 'production',
  UPSTREAM_MODE: 'sandbox',
  WEBHOOK_CLIENT_ID: 'collector',
  WEBHOOK_CLIENT_SECRET: 'hook-secret-live-0001',
  WEBHOOK_ALLOWED_IPS: '203.0.113.0/24',
};

describe('authorization settings', () => {
  it('are off outside production without AUTH_JWKS_URL, and read every AUTH_* variable when it is set', () => {
    expect(loadConfig({}).auth).toBeUndefined();
    expect(loadConfig({ AUTH_JWKS_URL: ISSUER.AUTH_JWKS_URL, AUTH_ISSUER: ISSUER.AUTH_ISSUER }).auth).toEqual({
      ...{ jwksUrl: ISSUER.AUTH_JWKS_URL, issuer: ISSUER.AUTH_ISSUER },
      audience: undefined,
      accountsClaim: 'accounts',
      ...SANDBOX_DEFAULTS,
    });
    const file = loadConfig({
      AUTH_JWKS_URL: 'file:keys/jwks.json',
      AUTH_ISSUER: 'https://i',
      AUTH_AUDIENCE: 'bank',
      AUTH_ACCOUNTS_CLAIM: 'https://bank/accounts',
      AUTH_JWKS_MAX_AGE_S: '60',
    });
    expect(file.auth).toEqual({
      jwksUrl: 'file:keys/jwks.json',
      issuer: 'https://i',
      audience: 'bank',
      accountsClaim: 'https://bank/accounts',
      keysMaxAgeMs: 60_000,
      refuseDevelopmentKey: false,
    });
    expect(problemsOf({ ...ISSUER, AUTH_JWKS_MAX_AGE_S: '0' })).toEqual([
      'AUTH_JWKS_MAX_AGE_S must be a whole number from 1 to 86400, got "0"',
    ]);
  });

  it('take AUTH_JWKS_URL alone under the sandbox rules (AUTH_ISSUER and AUTH_AUDIENCE then unchecked), and a JWKS location that is a URL or a file', () => {
    expect(loadConfig({ AUTH_JWKS_URL: 'https://issuer.test/jwks' }).auth).toMatchObject({
      jwksUrl: 'https://issuer.test/jwks',
      issuer: undefined,
      audience: undefined,
    });
    expect(problemsOf({ AUTH_JWKS_URL: 'issuer.test/jwks', AUTH_ISSUER: 'x' })).toEqual([
      'AUTH_JWKS_URL must be an http(s) URL or file:<path> of a JWKS document',
    ]);
  });

  it('refuse an issuer or audience without AUTH_JWKS_URL, which would leave authorization off unnoticed', () => {
    expect(problemsOf({ AUTH_ISSUER: 'https://issuer.test' })).toEqual([
      'AUTH_ISSUER is set but AUTH_JWKS_URL is not, so no token would be checked: set AUTH_JWKS_URL too, or unset AUTH_ISSUER',
    ]);
  });

  it('fail closed in production: all three required, reported together with every other problem', () => {
    expect(problemsOf({ ...PRODUCTION })).toEqual([
      'AUTH_JWKS_URL is required when NODE_ENV=production: where the token issuer publishes its keys (https://…/.well-known/jwks.json)',
      'AUTH_ISSUER is required when NODE_ENV=production: the `iss` every token must carry',
      'AUTH_AUDIENCE is required when NODE_ENV=production: the `aud` every token must carry (without it, tokens the issuer mints for other APIs would be accepted)',
    ]);
    expect(problemsOf({ ...PRODUCTION, AUTH_ISSUER: 'https://issuer.test', AUTH_AUDIENCE: 'bank', PORT: 'x' })).toEqual([
      'PORT must be a whole number from 0 to 65535, got "x"',
      'AUTH_JWKS_URL is required when NODE_ENV=production: where the token issuer publishes its keys (https://…/.well-known/jwks.json)',
    ]);
    expect(loadConfig({ ...PRODUCTION, ...ISSUER }).auth).toMatchObject({
      issuer: 'https://issuer.test',
      audience: 'bank-subgraph',
      refuseDevelopmentKey: true,
    });
  });

  it('refuse the published development keys in production, however the path is written', () => {
    const refusal =
      "AUTH_JWKS_URL names the repository's published development keys, refused when NODE_ENV=production: point it at your token issuer's JWKS";
    for (const url of ['file:dev/auth-jwks.json', 'file:./dev/../dev/auth-jwks.json', `file://${process.cwd()}/dev/auth-jwks.json`]) {
      expect(
        problemsOf({ ...PRODUCTION, AUTH_JWKS_URL: url, AUTH_ISSUER: 'https://bank-subgraph.dev.invalid', AUTH_AUDIENCE: 'bank' }),
      ).toEqual([refusal]);
    }
    expect(loadConfig({ AUTH_JWKS_URL: 'file:dev/auth-jwks.json', AUTH_ISSUER: 'https://bank-subgraph.dev.invalid' }).auth).toBeDefined();
  });
});

describe('SUBSCRIPTION_CALLBACK_URLS', () => {
  it('allows any URL under the sandbox rules and none elsewhere when unset', () => {
    expect(loadConfig({}).callbackUrls).toBe('any');
    expect(loadConfig({ ...PRODUCTION, ...ISSUER }).callbackUrls).toEqual([]);
  });

  it('reads comma-separated prefixes, normalised, and names each one that is not a plain http(s) URL', () => {
    const { callbackUrls } = loadConfig({ SUBSCRIPTION_CALLBACK_URLS: 'https://Router.Internal:443/callback, http://10.0.0.5:4000/' });
    expect(callbackUrls === 'any' ? callbackUrls : callbackUrls.map((url) => url.href)).toEqual([
      'https://router.internal/callback',
      'http://10.0.0.5:4000/',
    ]);
    expect(
      problemsOf({
        SUBSCRIPTION_CALLBACK_URLS: 'router.internal/cb, https://u:p@router.internal/, https://router.internal/?x=1, ftp://r/',
      }),
    ).toEqual(
      ['router.internal/cb', 'https://***@router.internal/', 'https://router.internal/?x=1', 'ftp://r/'].map(
        (entry) => `SUBSCRIPTION_CALLBACK_URLS: "${entry}" is not an absolute http(s) URL without credentials, query or fragment`,
      ),
    );
  });
});

describe('WEBHOOK_PORT', () => {
  it('is unset by default, a port when set, and never PORT itself', () => {
    expect(loadConfig({}).webhookPort).toBeUndefined();
    expect(loadConfig({ WEBHOOK_PORT: '8443' }).webhookPort).toBe(8443);
    expect(problemsOf({ WEBHOOK_PORT: '4001' })).toEqual(['WEBHOOK_PORT must differ from PORT: the webhook gets a port of its own']);
    expect(problemsOf({ WEBHOOK_PORT: 'http' })).toEqual(['WEBHOOK_PORT must be a whole number from 0 to 65535, got "http"']);
  });
});
