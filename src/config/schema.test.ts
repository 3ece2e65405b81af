import { describe, expect, it } from 'vitest';
import { ISSUER, LIVE_BANK, problemsOf } from '../../test/helpers/config.ts';
import { loadConfig, loadSchemaSettings } from './index.ts';

const LIVE = { ...LIVE_BANK, ...ISSUER };
const PRODUCTION_SANDBOX = { ...LIVE, NODE_ENV: 'production', UPSTREAM_MODE: 'sandbox' };

describe('the configuration schema', () => {
  it('trims every value and reads one of blanks only as unset', () => {
    expect(loadConfig({ PORT: ' 4002 ', HOST: '  ' }).port).toBe(4002);
    expect(loadConfig({ HOST: ' \t ' }).host).toBe('127.0.0.1');
    expect(problemsOf({ ...LIVE, BANK_PASSWORD: '   ' })).toEqual(['BANK_PASSWORD is required when UPSTREAM_MODE=live']);
  });

  it('keeps a gateway URL given for the live bank, and reads no bank URL for the sandbox', () => {
    const upstream = loadConfig({ ...LIVE, BANK_GATEWAY_URL: 'https://gateway.bank.test/oauth/' }).upstream;
    expect(upstream.mode === 'live' && upstream.urls.gateway).toBe('https://gateway.bank.test/oauth');
    expect(problemsOf({ ...LIVE, BANK_GATEWAY_URL: 'gateway.bank.test' })).toEqual(['BANK_GATEWAY_URL must be an absolute http(s) URL']);
    expect(problemsOf({ BANK_BASE_URL: 'not a url', BANK_COLLECTION_URL: 'nor this' })).toEqual([]);
  });

  it('checks BANK_COLLECTION_URL when given with COLLECTION_CONFIRMATION=off, and keeps it', () => {
    const upstream = loadConfig({ ...LIVE, COLLECTION_CONFIRMATION: 'off' }).upstream;
    expect(upstream.mode === 'live' && upstream.urls.collection).toBe('https://collect.bank.test/vps/api');
    expect(problemsOf({ ...LIVE, COLLECTION_CONFIRMATION: 'off', BANK_COLLECTION_URL: 'collect' })).toEqual([
      'BANK_COLLECTION_URL must be an absolute http(s) URL',
    ]);
  });

  it('refuses AUTH_AUDIENCE without AUTH_JWKS_URL under the sandbox rules, and takes the JWKS without an audience there', () => {
    expect(problemsOf({ AUTH_AUDIENCE: 'bank' })).toEqual([
      'AUTH_AUDIENCE is set but AUTH_JWKS_URL is not, so no token would be checked: set AUTH_JWKS_URL too, or unset AUTH_AUDIENCE',
    ]);
    expect(loadConfig({ AUTH_JWKS_URL: ISSUER.AUTH_JWKS_URL, AUTH_ISSUER: ISSUER.AUTH_ISSUER }).auth?.audience).toBeUndefined();
  });

  it('refuses a JWKS over clear text to another host however the scheme is written', () => {
    for (const url of ['http://issuer.test/jwks.json', 'HTTP://issuer.test/jwks.json', 'Http://issuer.test/jwks.json']) {
      expect(problemsOf({ ...LIVE, AUTH_JWKS_URL: url })).toEqual([
        'AUTH_JWKS_URL must be https:// (or file:, or http:// to a loopback address) when UPSTREAM_MODE=live',
      ]);
    }
    expect(problemsOf({ ...LIVE, AUTH_JWKS_URL: 'HTTPS://issuer.test/jwks.json' })).toEqual([]);
  });

  it('closes the doors on a sandbox in production too: a memory store, every hop trusted, placeholders', () => {
    expect(problemsOf(PRODUCTION_SANDBOX)).toEqual([]);
    expect(
      problemsOf({
        ...PRODUCTION_SANDBOX,
        STORE_URL: 'sqlite::memory:',
        WEBHOOK_ALLOWED_IPS: 'any',
        TRUST_PROXY: 'true',
        BANK_PASSWORD: 'changeme',
      }),
    ).toEqual([
      expect.stringMatching(/^STORE_URL=sqlite::memory: is refused when NODE_ENV=production/),
      expect.stringMatching(/^TRUST_PROXY=true trusts every hop, refused when NODE_ENV=production/),
      expect.stringMatching(/^BANK_PASSWORD reads as a placeholder .*refused when NODE_ENV=production/),
    ]);
  });

  it('refuses a mode in another case, and applies the production rules to it', () => {
    const problems = problemsOf({ ...LIVE, UPSTREAM_MODE: 'LIVE', WEBHOOK_CLIENT_SECRET: 'short' });
    expect(problems[0]).toBe('UPSTREAM_MODE must be "sandbox" or "live"');
    expect(problems).toContain(
      'WEBHOOK_CLIENT_SECRET is shorter than 16 characters, refused when UPSTREAM_MODE=LIVE: whoever guesses it can sign a delivery; agree a longer one with the bank',
    );
  });

  it('reads levels, switches and booleans whatever their case, and names a bad one', () => {
    const config = loadConfig({ LOG_LEVEL: 'DEBUG', PUBLISH_ACCESS_DIRECTIVES: 'FALSE', COLLECTION_CONFIRMATION: 'Off' });
    expect([config.logLevel, config.publishAccessDirectives, config.confirmation.enabled]).toEqual(['debug', false, false]);
    expect(problemsOf({ PUBLISH_ACCESS_DIRECTIVES: 'no' })).toEqual(['PUBLISH_ACCESS_DIRECTIVES must be true or false, got "no"']);
  });

  it('reads SUBSCRIPTION_KEEPALIVE_MS from 100 ms to 10 minutes, 12 s by default, and CONFIRMATION_CONCURRENCY up to 256', () => {
    expect(loadConfig({}).subscriptionKeepAliveMs).toBe(12_000);
    expect(loadConfig({ SUBSCRIPTION_KEEPALIVE_MS: '100' }).subscriptionKeepAliveMs).toBe(100);
    expect(problemsOf({ SUBSCRIPTION_KEEPALIVE_MS: '99', CONFIRMATION_CONCURRENCY: '257' })).toEqual([
      'SUBSCRIPTION_KEEPALIVE_MS must be a whole number from 100 to 600000, got "99"',
      'CONFIRMATION_CONCURRENCY must be a whole number from 1 to 256, got "257"',
    ]);
  });

  it('takes postgresql:// stores and rediss:// pub/sub', () => {
    const config = loadConfig({ STORE_URL: 'postgresql://app@db/bank', PUBSUB_URL: 'rediss://cache:6380' });
    expect([config.storeUrl.reveal(), config.pubsubUrl.reveal()]).toEqual(['postgresql://app@db/bank', 'rediss://cache:6380']);
  });

  it('compares WEBHOOK_PORT with the PORT given, and lets both be 0 (each a free port)', () => {
    expect(problemsOf({ PORT: '5000', WEBHOOK_PORT: '5000' })).toEqual([
      'WEBHOOK_PORT must differ from PORT: the webhook gets a port of its own',
    ]);
    expect(loadConfig({ PORT: '5000', WEBHOOK_PORT: '4001' }).webhookPort).toBe(4001);
    expect(loadConfig({ PORT: '0', WEBHOOK_PORT: '0' }).webhookPort).toBe(0);
  });
});

describe('loadSchemaSettings', () => {
  it('reads what the published SDL depends on, and nothing the server alone needs', () => {
    expect(loadSchemaSettings({})).toEqual({ catalogueMaxAgeS: 600, publishAccessDirectives: true });
    expect(loadSchemaSettings({ NODE_ENV: 'production', BANK_LIST_TTL_S: '60', PUBLISH_ACCESS_DIRECTIVES: 'false' })).toEqual({
      catalogueMaxAgeS: 60,
      publishAccessDirectives: false,
    });
    expect(() => loadSchemaSettings({ BANK_LIST_TTL_S: 'ten', PUBLISH_ACCESS_DIRECTIVES: 'no' })).toThrow(
      expect.objectContaining({
        problems: [
          'BANK_LIST_TTL_S must be a whole number from 0 to 86400, got "ten"',
          'PUBLISH_ACCESS_DIRECTIVES must be true or false, got "no"',
        ],
      }),
    );
  });
});
