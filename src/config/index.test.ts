import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ISSUER, LIVE_BANK, problemsOf } from '../../test/helpers/config.ts';
import {
  DEFAULT_MAX_OPERATION_COST,
  DEFAULT_QUARANTINE_MAX_BYTES,
  DEFAULT_QUARANTINE_MAX_ROWS,
  DEFAULT_WEBHOOK_MAX_BODY_BYTES,
  describeUrl,
  loadConfig,
} from './index.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import { CREDENTIAL_VARIABLES } from './secrets.ts';

/** Every setting a live start needs: the bank's, and the token issuer's. */
const LIVE = { ...LIVE_BANK, ...ISSUER };

describe('loadConfig', () => {
  it('needs nothing for the embedded default: sandbox, SQLite under ./data, in-process pub/sub', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4001);
    expect(config.host).toBe('127.0.0.1');
    expect(config.upstream.mode).toBe('sandbox');
    expect(config.upstream).not.toHaveProperty('urls');
    expect(config.upstream.credentials.password.reveal()).toBe(sandboxCredentials.password);
    expect(config.storeUrl.reveal()).toBe('sqlite:./data/collections.db');
    expect(config.pubsubUrl.reveal()).toBe('memory:');
    expect(config.upstream.timeoutMs).toBe(10_000);
    expect(config.upstream.bankListTtlMs).toBe(600_000);
    expect(config.upstream.timezone).toBe('Africa/Lagos');
    expect(config.routerSecret).toBeUndefined();
  });

  it('reads every live variable, defaults the gateway to the base URL and drops trailing slashes', () => {
    const config = loadConfig(LIVE);
    expect(config.upstream).toHaveProperty('urls', {
      base: 'https://api.bank.test/gw',
      gateway: 'https://api.bank.test/gw',
      billing: 'https://bills.bank.test/provipay/webapi',
      posting: 'https://post.bank.test/postingrest',
      wallet: 'https://wallet.bank.test/api',
      collection: 'https://collect.bank.test/vps/api',
    });
    expect(config.upstream.credentials.apiToken.reveal()).toBe('tok-live-1');
    expect(config.webhook.clientId).toBe('collector');
  });

  it('gives live mode its URLs and sandbox mode none, told apart by mode', () => {
    const urlsOf = (env: Record<string, string>) => {
      const { upstream } = loadConfig(env);
      // The union narrows on mode: only live mode has `urls`, and it is never undefined there.
      return upstream.mode === 'live' ? upstream.urls.posting : 'sandbox';
    };
    expect(urlsOf(LIVE)).toBe('https://post.bank.test/postingrest');
    expect(urlsOf({})).toBe('sandbox');
    expect(urlsOf({ UPSTREAM_MODE: 'sandbox', BANK_BASE_URL: 'https://api.bank.test' })).toBe('sandbox');
    expect(loadConfig({ ...LIVE, UPSTREAM_MODE: '' }).upstream.mode).toBe('sandbox');
  });

  it('reports every missing live URL and credential at once, each by name', () => {
    const problems = problemsOf({ UPSTREAM_MODE: 'live' });
    for (const name of Object.keys(LIVE).filter((n) => n !== 'UPSTREAM_MODE')) {
      expect(problems.some((p) => p.startsWith(`${name} `))).toBe(true);
    }
  });

  it('treats an empty variable as unset', () => {
    expect(problemsOf({ ...LIVE, BANK_PASSWORD: '' })).toEqual(['BANK_PASSWORD is required when UPSTREAM_MODE=live']);
    expect(loadConfig({ PORT: '' }).port).toBe(4001);
  });

  it('names each invalid value: port, mode, URL, store, pub/sub, zone, level, time-out', () => {
    const problems = problemsOf({
      ...LIVE,
      PORT: '70000',
      BANK_WALLET_URL: 'wallet.bank.test',
      STORE_URL: 'mysql://x',
      PUBSUB_URL: 'kafka://x',
      BANK_TIMEZONE: 'Mars/Olympus',
      LOG_LEVEL: 'loud',
      BANK_TIMEOUT_MS: '-5',
    });
    for (const name of ['PORT', 'BANK_WALLET_URL', 'STORE_URL', 'PUBSUB_URL', 'BANK_TIMEZONE', 'LOG_LEVEL', 'BANK_TIMEOUT_MS']) {
      expect(problems.some((p) => p.startsWith(name))).toBe(true);
    }
    expect(problemsOf({ UPSTREAM_MODE: 'staging' })).toContain('UPSTREAM_MODE must be "sandbox" or "live"');
  });

  it('reads QUARANTINE_MAX_ROWS as a whole number from 0, 100,000 by default', () => {
    expect(loadConfig({}).quarantineMaxRows).toBe(DEFAULT_QUARANTINE_MAX_ROWS);
    expect(DEFAULT_QUARANTINE_MAX_ROWS).toBe(100_000);
    expect(loadConfig({ QUARANTINE_MAX_ROWS: '0' }).quarantineMaxRows).toBe(0);
    expect(loadConfig({ QUARANTINE_MAX_ROWS: '' }).quarantineMaxRows).toBe(DEFAULT_QUARANTINE_MAX_ROWS);
    for (const bad of ['-1', '1e5', 'many', '100000001']) {
      expect(problemsOf({ QUARANTINE_MAX_ROWS: bad })).toEqual([
        `QUARANTINE_MAX_ROWS must be a whole number from 0 to 100000000, got "${bad}"`,
      ]);
    }
  });

  it('reads QUARANTINE_MAX_BYTES as a whole number of bytes from 0, 1 GiB by default', () => {
    expect(loadConfig({}).quarantineMaxBytes).toBe(DEFAULT_QUARANTINE_MAX_BYTES);
    expect(DEFAULT_QUARANTINE_MAX_BYTES).toBe(1_073_741_824);
    expect(loadConfig({ QUARANTINE_MAX_BYTES: '0' }).quarantineMaxBytes).toBe(0);
    expect(loadConfig({ QUARANTINE_MAX_BYTES: '5000000' }).quarantineMaxBytes).toBe(5_000_000);
    for (const bad of ['-1', '1GiB', '1e9']) {
      expect(problemsOf({ QUARANTINE_MAX_BYTES: bad })[0]).toMatch(/^QUARANTINE_MAX_BYTES must be a whole number from 0 to /);
    }
  });

  it('reads WEBHOOK_MAX_BODY_BYTES as a whole number of bytes from 1 KiB to 1 MiB, 64 KiB by default', () => {
    expect(loadConfig({}).webhookMaxBodyBytes).toBe(DEFAULT_WEBHOOK_MAX_BODY_BYTES);
    expect(DEFAULT_WEBHOOK_MAX_BODY_BYTES).toBe(65_536);
    expect(loadConfig({ WEBHOOK_MAX_BODY_BYTES: '4096' }).webhookMaxBodyBytes).toBe(4096);
    for (const bad of ['1023', '1048577', '64KiB', '-1']) {
      expect(problemsOf({ WEBHOOK_MAX_BODY_BYTES: bad })).toEqual([
        `WEBHOOK_MAX_BODY_BYTES must be a whole number from 1024 to 1048576, got "${bad}"`,
      ]);
    }
  });

  it('confirms with the bank by default, CONFIRMATION_CONCURRENCY at a time, and COLLECTION_CONFIRMATION=off turns it off', () => {
    expect(loadConfig({}).confirmation).toEqual({ enabled: true, concurrency: 16, notFoundRecheckMs: 1_000 });
    expect(loadConfig({ COLLECTION_CONFIRMATION: 'OFF', CONFIRMATION_CONCURRENCY: '4' }).confirmation).toEqual({
      enabled: false,
      concurrency: 4,
      notFoundRecheckMs: 1_000,
    });
    expect(problemsOf({ COLLECTION_CONFIRMATION: 'maybe' })).toEqual(['COLLECTION_CONFIRMATION must be "on" or "off", got "maybe"']);
    expect(problemsOf({ CONFIRMATION_CONCURRENCY: '0' })).toEqual([
      'CONFIRMATION_CONCURRENCY must be a whole number from 1 to 256, got "0"',
    ]);
  });

  it('waits CONFIRMATION_NOT_FOUND_RECHECK_S between the two not-found answers: 30 s, 1 s under the sandbox rules', () => {
    expect(loadConfig(LIVE).confirmation.notFoundRecheckMs).toBe(30_000);
    expect(loadConfig({ ...LIVE, CONFIRMATION_NOT_FOUND_RECHECK_S: '120' }).confirmation.notFoundRecheckMs).toBe(120_000);
    expect(problemsOf({ CONFIRMATION_NOT_FOUND_RECHECK_S: '0' })).toEqual([
      'CONFIRMATION_NOT_FOUND_RECHECK_S must be a whole number from 1 to 86400, got "0"',
    ]);
  });

  it('requires BANK_COLLECTION_URL under the live bank unless COLLECTION_CONFIRMATION=off', () => {
    const upstream = loadConfig(LIVE).upstream;
    expect(upstream.mode === 'live' && upstream.urls.collection).toBe('https://collect.bank.test/vps/api');
    const { BANK_COLLECTION_URL: _omitted, ...withoutCollection } = LIVE;
    expect(problemsOf(withoutCollection)).toEqual(['BANK_COLLECTION_URL is required when UPSTREAM_MODE=live']);
    const off = loadConfig({ ...withoutCollection, COLLECTION_CONFIRMATION: 'off' }).upstream;
    expect(off.mode === 'live' && off.urls.collection).toBeUndefined();
    expect(problemsOf({ ...LIVE, BANK_COLLECTION_URL: 'collect.bank.test' })).toEqual([
      'BANK_COLLECTION_URL must be an absolute http(s) URL',
    ]);
  });

  it('reads MAX_OPERATION_COST as a whole number of bank calls from 1, with a default that serves real screens', () => {
    expect(loadConfig({}).maxOperationCost).toBe(DEFAULT_MAX_OPERATION_COST);
    expect(loadConfig({ MAX_OPERATION_COST: '60' }).maxOperationCost).toBe(60);
    for (const bad of ['0', '-1', '2.5', 'lots']) {
      expect(problemsOf({ MAX_OPERATION_COST: bad })).toEqual([
        `MAX_OPERATION_COST must be a whole number from 1 to 1000000, got "${bad}"`,
      ]);
    }
  });

  it('reads BANK_LIST_STALE_S as whole seconds (default a day, 0 off), reporting a bad value with the others', () => {
    expect(loadConfig({}).upstream.bankListStaleMs).toBe(86_400_000);
    expect(loadConfig({ BANK_LIST_STALE_S: '0' }).upstream.bankListStaleMs).toBe(0);
    expect(loadConfig({ BANK_LIST_STALE_S: '3600' }).upstream.bankListStaleMs).toBe(3_600_000);
    for (const bad of ['-1', '1.5', 'a day', '2592001']) {
      expect(problemsOf({ BANK_LIST_STALE_S: bad })).toEqual([`BANK_LIST_STALE_S must be a whole number from 0 to 2592000, got "${bad}"`]);
    }
    expect(problemsOf({ BANK_LIST_STALE_S: 'x', BANK_LIST_TTL_S: 'y' })).toHaveLength(2);
  });

  it('reads WEBHOOK_ALLOWED_IPS (unset: any source) and names each entry that is no address or range', () => {
    expect(loadConfig({}).webhookAllowedSources).toBeUndefined();
    expect(loadConfig({ WEBHOOK_ALLOWED_IPS: '203.0.113.10, 2001:db8::/32' }).webhookAllowedSources).toEqual([
      { address: '203.0.113.10', prefix: 32, family: 'ipv4' },
      { address: '2001:db8::', prefix: 32, family: 'ipv6' },
    ]);
    expect(problemsOf({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24, 10.0.0.0/33, bank.example.com' })).toEqual([
      'WEBHOOK_ALLOWED_IPS: "10.0.0.0/33" is not an IP address or CIDR range',
      'WEBHOOK_ALLOWED_IPS: "bank.example.com" is not an IP address or CIDR range',
    ]);
    expect(problemsOf({ WEBHOOK_ALLOWED_IPS: ',' })).toEqual(['WEBHOOK_ALLOWED_IPS lists no address']);
  });

  it('listens on loopback by default under the sandbox rules, which open doors, and on every interface elsewhere', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'development' }).host).toBe('127.0.0.1');
    expect(loadConfig(LIVE).host).toBe('0.0.0.0');
    expect(loadConfig({ ...LIVE, UPSTREAM_MODE: 'sandbox', NODE_ENV: 'production' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ ...LIVE, HOST: '10.1.2.3' }).host).toBe('10.1.2.3');
  });

  it('takes WEBHOOK_ALLOWED_IPS=any (any case) as every source, on purpose, with a warning that says why it is dangerous', () => {
    expect(loadConfig({}).warnings).toEqual([]);
    for (const any of ['any', 'ANY', ' Any ']) {
      const config = loadConfig({ ...LIVE, WEBHOOK_ALLOWED_IPS: any });
      expect(config.webhookAllowedSources).toBeUndefined();
      expect(config.warnings).toEqual([
        expect.stringMatching(/^WEBHOOK_ALLOWED_IPS=any: .*every address.*same signature.*forged transfer/),
      ]);
    }
    // Under the sandbox rules too: `any` is said out loud wherever it is written.
    expect(loadConfig({ WEBHOOK_ALLOWED_IPS: 'any' }).warnings).toHaveLength(1);
    expect(problemsOf({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24, any' })).toEqual([
      'WEBHOOK_ALLOWED_IPS: "any" accepts every source and stands alone, not beside addresses',
    ]);
  });

  it('reads TRUST_PROXY as Fastify does: true, a hop count, or addresses, ranges and proxy-addr names', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback, 2001:db8::1' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback', '2001:db8::1']);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/8, proxy.internal' })).toEqual([
      'TRUST_PROXY: "proxy.internal" is not true, a hop count, an IP address, a CIDR range, loopback, linklocal or uniquelocal',
    ]);
  });

  it('refuses TRUST_PROXY=true beside WEBHOOK_ALLOWED_IPS, saying what to give instead', () => {
    const problems = problemsOf({ TRUST_PROXY: 'true', WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^TRUST_PROXY=true trusts every hop, refused with WEBHOOK_ALLOWED_IPS/);
    expect(problems[0]).toContain('TRUST_PROXY=1');
    // A hop count or named proxies stay allowed with an allow-list.
    expect(problemsOf({ TRUST_PROXY: '1', WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' })).toEqual([]);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/8', WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' })).toEqual([]);
  });

  it('never puts a secret value in an error, a log line or JSON', () => {
    const problems = problemsOf({ ...LIVE, STORE_URL: 'postgres://app:hunter2@db/bank', PORT: 'x' });
    expect(problems.join('\n')).not.toContain('hunter2');
    const config = loadConfig({ ...LIVE, STORE_URL: 'postgres://app:hunter2@db/bank', ROUTER_SECRET: 'router-s3cret' });
    // The test is that a template shows no secret, whatever its type.
    // oxlint-disable-next-line typescript/restrict-template-expressions
    const shown = [JSON.stringify(config), inspect(config, { depth: 10 }), `${config.upstream.credentials.password}`].join('\n');
    for (const secret of ['pw-live-1', 'tok-live-1', 'oauth-secret-1', 'hook-secret-live-0001', 'hunter2', 'router-s3cret']) {
      expect(shown).not.toContain(secret);
    }
  });

  it('quotes a refused URL entry without the credentials it carries', () => {
    const problems = problemsOf({
      SUBSCRIPTION_CALLBACK_URLS: 'https://router:hunter2pass@router.internal/callback?x=1',
      CORS_ORIGINS: 'https://app:hunter2pass@app.example.com/path',
    }).join('\n');
    expect(problems).toContain('SUBSCRIPTION_CALLBACK_URLS: "https://***@router.internal/callback?x=1" is not an absolute http(s) URL');
    expect(problems).toContain('CORS_ORIGINS: "https://***@app.example.com/path" is not an origin');
    expect(problems).not.toContain('hunter2pass');
  });

  it('describes a URL for logs without its password', () => {
    expect(describeUrl(new Secret('postgres://app:hunter2@db:5432/bank'))).toBe('postgres://app:***@db:5432/bank');
    expect(describeUrl(new Secret('sqlite:./data/collections.db'))).toBe('sqlite:./data/collections.db');
    expect(describeUrl(new Secret('redis://:pw@cache:6379'))).toBe('redis://:***@cache:6379');
  });

  describe('outside the sandbox rules (a live bank, or NODE_ENV=production), fail closed', () => {
    const OWN_WEBHOOK = {
      WEBHOOK_CLIENT_ID: 'collector',
      WEBHOOK_CLIENT_SECRET: 'hook-secret-live-0001',
      WEBHOOK_ALLOWED_IPS: '203.0.113.0/24',
    };
    const AUTH_REQUIRED = (why: string) => [
      `AUTH_JWKS_URL is required when ${why}: where the token issuer publishes its keys (https://…/.well-known/jwks.json)`,
      `AUTH_ISSUER is required when ${why}: the \`iss\` every token must carry`,
      `AUTH_AUDIENCE is required when ${why}: the \`aud\` every token must carry (without it, tokens the issuer mints for other APIs would be accepted)`,
    ];

    it('refuses to start with only NODE_ENV set, naming every missing setting at once', () => {
      expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
        'UPSTREAM_MODE is required when NODE_ENV=production: "live" (or "sandbox" for a demo deployment)',
        'WEBHOOK_CLIENT_ID is required when NODE_ENV=production',
        'WEBHOOK_CLIENT_SECRET is required when NODE_ENV=production',
        `WEBHOOK_ALLOWED_IPS is required when NODE_ENV=production: the bank's addresses or ranges (its signature is the same on every delivery, so whoever has seen one could sign their own), or "any" to accept every source on purpose`,
        ...AUTH_REQUIRED('NODE_ENV=production'),
      ]);
    });

    it('needs the webhook credentials on a sandbox chosen on purpose, and starts with them', () => {
      expect(problemsOf({ NODE_ENV: 'production', UPSTREAM_MODE: 'sandbox', ...ISSUER })).toEqual([
        'WEBHOOK_CLIENT_ID is required when NODE_ENV=production',
        'WEBHOOK_CLIENT_SECRET is required when NODE_ENV=production',
        `WEBHOOK_ALLOWED_IPS is required when NODE_ENV=production: the bank's addresses or ranges (its signature is the same on every delivery, so whoever has seen one could sign their own), or "any" to accept every source on purpose`,
      ]);
      const config = loadConfig({ NODE_ENV: 'production', UPSTREAM_MODE: 'sandbox', ...OWN_WEBHOOK, ...ISSUER });
      expect(config.sandboxRules).toBe(false);
      expect(config.upstream.mode).toBe('sandbox');
      expect(config.webhook.clientSecret.reveal()).toBe('hook-secret-live-0001');
    });

    it('refuses the sandbox’s published webhook values, without printing them', () => {
      for (const closed of [{ NODE_ENV: 'production', UPSTREAM_MODE: 'sandbox' } as Record<string, string>, LIVE]) {
        const problems = problemsOf({
          ...closed,
          WEBHOOK_CLIENT_ID: sandboxCredentials.webhookClientId,
          WEBHOOK_CLIENT_SECRET: sandboxCredentials.webhookClientSecret,
          WEBHOOK_CLIENT_SECRET_PREVIOUS: sandboxCredentials.webhookClientSecret,
        });
        expect(problems.filter((p) => p.includes('published value'))).toHaveLength(3);
        expect(problems.join('\n')).not.toContain(sandboxCredentials.webhookClientSecret);
      }
    });

    it('requires WEBHOOK_ALLOWED_IPS, or "any" said on purpose', () => {
      const { WEBHOOK_ALLOWED_IPS: _omitted, ...withoutSources } = LIVE;
      expect(problemsOf(withoutSources)).toEqual([
        `WEBHOOK_ALLOWED_IPS is required when UPSTREAM_MODE=live: the bank's addresses or ranges (its signature is the same on every delivery, so whoever has seen one could sign their own), or "any" to accept every source on purpose`,
      ]);
      expect(problemsOf({ ...withoutSources, WEBHOOK_ALLOWED_IPS: '' })).toHaveLength(1);
      expect(loadConfig({ ...withoutSources, WEBHOOK_ALLOWED_IPS: 'any' }).webhookAllowedSources).toBeUndefined();
      expect(loadConfig(LIVE).webhookAllowedSources).toEqual([{ address: '203.0.113.0', prefix: 24, family: 'ipv4' }]);
    });

    it.each(CREDENTIAL_VARIABLES)('refuses %s when it reads as a placeholder, whatever its case, naming it and never its value', (name) => {
      const mark = name.toLowerCase().replace(/_/g, '');
      for (const value of [
        `REPLACE-ME-${mark}`,
        `replace_me_${mark}`,
        `ChangeMe-${mark}`,
        `changeit${mark}`,
        `${mark}.example.com`,
        `EXAMPLE-${mark}`,
        `XXXXXXXX-${mark}`,
        `xxx`,
        `<${mark}>`,
        `your-${mark}-here`,
        `TODO-${mark}`,
        `\${${mark}}`,
        'secret',
        'Password1',
        '…',
      ]) {
        const problems = problemsOf({ ...LIVE, [name]: value });
        expect(problems, value).toEqual([
          expect.stringMatching(new RegExp(`^${name} reads as a placeholder .*refused when UPSTREAM_MODE=live`)),
        ]);
        if (value.length > 8) expect(problems.join('\n')).not.toContain(value);
      }
    });

    it('refuses a webhook secret shorter than 16 characters, naming it, and takes one of 16', () => {
      const short = '7Hq2-short-0001';
      expect(problemsOf({ ...LIVE, WEBHOOK_CLIENT_SECRET: short, WEBHOOK_CLIENT_SECRET_PREVIOUS: `${short}9`.slice(1) })).toEqual([
        'WEBHOOK_CLIENT_SECRET is shorter than 16 characters, refused when UPSTREAM_MODE=live: whoever guesses it can sign a delivery; agree a longer one with the bank',
        'WEBHOOK_CLIENT_SECRET_PREVIOUS is shorter than 16 characters, refused when UPSTREAM_MODE=live: whoever guesses it can sign a delivery; agree a longer one with the bank',
      ]);
      expect(problemsOf({ ...LIVE, WEBHOOK_CLIENT_SECRET: `${short}2`, WEBHOOK_CLIENT_SECRET_PREVIOUS: `${short}3` })).toEqual([]);
      // Characters, not bytes.
      expect(problemsOf({ ...LIVE, WEBHOOK_CLIENT_SECRET: 'ñ'.repeat(15) })).toHaveLength(1);
    });

    it('reports a missing allow-list, placeholders and a short secret together, each by name', () => {
      const problems = problemsOf({
        ...LIVE,
        WEBHOOK_ALLOWED_IPS: '',
        WEBHOOK_CLIENT_SECRET: 'k7-short',
        BANK_PASSWORD: 'changeme',
        ROUTER_SECRET: '<router-secret>',
      });
      expect(problems.map((problem) => problem.split(' ')[0])).toEqual([
        'WEBHOOK_ALLOWED_IPS',
        'WEBHOOK_CLIENT_SECRET',
        'BANK_PASSWORD',
        'ROUTER_SECRET',
      ]);
    });

    it('starts live with every live setting, and reports production and live problems together', () => {
      expect(loadConfig({ NODE_ENV: 'production', ...LIVE, ...ISSUER }).upstream.mode).toBe('live');
      const problems = problemsOf({ NODE_ENV: 'production', ...LIVE, ...ISSUER, WEBHOOK_CLIENT_SECRET: '', BANK_PASSWORD: '', PORT: 'x' });
      expect(problems).toEqual([
        'BANK_PASSWORD is required when UPSTREAM_MODE=live',
        'WEBHOOK_CLIENT_SECRET is required when UPSTREAM_MODE=live',
        'PORT must be a whole number from 0 to 65535, got "x"',
      ]);
    });

    it.each([['staging'], ['development'], ['prod'], [undefined]])('gives a live bank the production rules with NODE_ENV=%s', (nodeEnv) => {
      const env: Record<string, string> = { ...LIVE_BANK, ...(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }) };
      expect(problemsOf(env)).toEqual(AUTH_REQUIRED('UPSTREAM_MODE=live'));
      const config = loadConfig({ ...env, ...ISSUER });
      expect(config.sandboxRules).toBe(false);
      expect(config.corsOrigins).toEqual([]);
      expect(config.callbackUrls).toEqual([]);
      expect(config.auth).toMatchObject({ audience: 'bank-subgraph', refuseDevelopmentKey: true });
    });

    it('treats a mode that is not "sandbox" as closed too, besides refusing it', () => {
      const problems = problemsOf({ UPSTREAM_MODE: 'sandbx' });
      expect(problems[0]).toBe('UPSTREAM_MODE must be "sandbox" or "live"');
      expect(problems).toContain('WEBHOOK_CLIENT_ID is required when UPSTREAM_MODE=sandbx');
      expect(problems).toContain(AUTH_REQUIRED('UPSTREAM_MODE=sandbx')[0]);
    });

    it.each([
      [
        'a memory store',
        { STORE_URL: 'sqlite::memory:' },
        'STORE_URL=sqlite::memory: is refused when UPSTREAM_MODE=live: every stored notification would be lost on a restart; use sqlite:<path> on a volume or postgres://…',
      ],
      [
        'a JWKS over plain http to another host',
        { AUTH_JWKS_URL: 'http://issuer.test/jwks.json' },
        'AUTH_JWKS_URL must be https:// (or file:, or http:// to a loopback address) when UPSTREAM_MODE=live',
      ],
      [
        'the published development keys',
        { AUTH_JWKS_URL: 'file:dev/auth-jwks.json' },
        "AUTH_JWKS_URL names the repository's published development keys, refused when UPSTREAM_MODE=live: point it at your token issuer's JWKS",
      ],
      [
        'TRUST_PROXY=true',
        { WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: 'true' },
        'TRUST_PROXY=true trusts every hop, refused when UPSTREAM_MODE=live',
      ],
      [
        'TRUST_PROXY=0.0.0.0/0',
        { WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: '0.0.0.0/0' },
        'TRUST_PROXY=0.0.0.0/0 trusts every hop, refused when UPSTREAM_MODE=live',
      ],
      [
        'TRUST_PROXY=::/0',
        { WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: '::/0' },
        'TRUST_PROXY=::/0 trusts every hop, refused when UPSTREAM_MODE=live',
      ],
      [
        'two halves of IPv4',
        { WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: '0.0.0.0/1, 128.0.0.0/1' },
        'TRUST_PROXY=0.0.0.0/1, 128.0.0.0/1 trusts every hop, refused when UPSTREAM_MODE=live',
      ],
      [
        'every IPv4-mapped address',
        { WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: '::ffff:0:0/96' },
        'TRUST_PROXY=::ffff:0:0/96 trusts every hop, refused when UPSTREAM_MODE=live',
      ],
    ])('refuses %s, naming the variable, with every other problem', (_what, setting, problem) => {
      const problems = problemsOf({ ...LIVE, ...setting, PORT: 'x' });
      expect(problems).toHaveLength(2);
      expect(problems).toContainEqual(expect.stringContaining(problem));
      expect(problems).toContain('PORT must be a whole number from 0 to 65535, got "x"');
    });

    it('takes the JWKS over https, from a file, or over http to a loopback address', () => {
      for (const url of [
        'https://issuer.test/jwks.json',
        'file:keys/jwks.json',
        'http://127.0.0.1:8080/jwks.json',
        'http://localhost/jwks.json',
        'http://[::1]:9/jwks.json',
      ]) {
        expect(problemsOf({ ...LIVE, ...ISSUER, AUTH_JWKS_URL: url })).toEqual([]);
      }
      expect(loadConfig({ AUTH_JWKS_URL: 'http://issuer.test/jwks.json', AUTH_ISSUER: 'x' }).auth?.jwksUrl).toBe(
        'http://issuer.test/jwks.json',
      );
    });

    it('keeps a proxy list that is not every hop, and reports a list proxy-addr would refuse by name, not as a crash', () => {
      expect(loadConfig({ ...LIVE, ...ISSUER, TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
      expect(loadConfig({ WEBHOOK_ALLOWED_IPS: 'any', TRUST_PROXY: '0.0.0.0/0' }).trustProxy).toBe(true);
      expect(problemsOf({ TRUST_PROXY: '0.0.0.0/0', WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' })).toEqual([
        expect.stringMatching(/^TRUST_PROXY=0\.0\.0\.0\/0 trusts every hop, refused with WEBHOOK_ALLOWED_IPS/),
      ]);
    });

    it('changes nothing under the sandbox rules: no setting at all still runs the sandbox, open', () => {
      const config = loadConfig({ NODE_ENV: 'development' });
      expect(config.sandboxRules).toBe(true);
      expect(config.upstream.mode).toBe('sandbox');
      expect(config.webhook.clientId).toBe(sandboxCredentials.webhookClientId);
      expect(config.webhook.clientSecret.reveal()).toBe(sandboxCredentials.webhookClientSecret);
      expect(config.corsOrigins).toBe('any');
      expect(config.callbackUrls).toBe('any');
      expect(config.auth).toBeUndefined();
      expect(loadConfig({ STORE_URL: 'sqlite::memory:' }).storeUrl.reveal()).toBe('sqlite::memory:');
      // The sandbox signs with its own published values: no allow-list, and any secret, are its business.
      expect(config.webhookAllowedSources).toBeUndefined();
      expect(problemsOf({ WEBHOOK_CLIENT_SECRET: 'changeme', BANK_PASSWORD: 'REPLACE-ME', ROUTER_SECRET: 'x' })).toEqual([]);
    });
  });

  it('reads CORS_ORIGINS: unset is any origin outside production and none in production; * is any', () => {
    expect(loadConfig({}).corsOrigins).toBe('any');
    expect(loadConfig({ NODE_ENV: 'production', ...LIVE, ...ISSUER }).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('any');
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    expect(problemsOf({ CORS_ORIGINS: 'https://app.example.com/, app.example.com, ftp://x.test' })).toEqual([
      'CORS_ORIGINS: "https://app.example.com/" is not an origin such as https://app.example.com (scheme, host and port only)',
      'CORS_ORIGINS: "app.example.com" is not an origin such as https://app.example.com (scheme, host and port only)',
      'CORS_ORIGINS: "ftp://x.test" is not an origin such as https://app.example.com (scheme, host and port only)',
    ]);
    expect(problemsOf({ CORS_ORIGINS: ' , ' })).toEqual(['CORS_ORIGINS lists no origin']);
  });

  it('reads WEBHOOK_CLIENT_SECRET_PREVIOUS for a rotation, and refuses it equal to the new secret', () => {
    expect(loadConfig({}).webhook.previousSecret).toBeUndefined();
    expect(loadConfig({ WEBHOOK_CLIENT_SECRET: 'new-1', WEBHOOK_CLIENT_SECRET_PREVIOUS: 'old-1' }).webhook.previousSecret?.reveal()).toBe(
      'old-1',
    );
    const problems = problemsOf({ WEBHOOK_CLIENT_SECRET: 'same-1', WEBHOOK_CLIENT_SECRET_PREVIOUS: 'same-1' });
    expect(problems).toEqual([
      'WEBHOOK_CLIENT_SECRET_PREVIOUS must differ from WEBHOOK_CLIENT_SECRET (the old secret during a rotation; unset it once the bank uses the new one)',
    ]);
  });
});
