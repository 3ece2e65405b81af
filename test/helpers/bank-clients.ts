/**
 * Shared by the upstream clients' tests: clients wired to a URL with a captured logger and fresh
 * metrics, and an assertion that a failure carries its contract code and leaks nothing.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect } from 'vitest';
import type { BankCredentials, BankUrls, CollectionCredentials } from '../../src/upstream/types.ts';
import { UpstreamError, type UpstreamErrorCode } from '../../src/errors.ts';
import { createMetrics } from '../../src/metrics.ts';
import { sandboxCredentials } from '../../src/sandbox/credentials.ts';
import { Secret } from '../../src/secret.ts';
import { createBankClients } from '../../src/upstream/index.ts';
import { onCleanup } from './cleanup.ts';

/** Distinctive values, so a test can search every output for them. */
export const testSecrets = {
  apiToken: 'tok-6f1d-SECRET',
  password: 'pw-91ab-SECRET',
  billingPassword: 'bill-pw-55c2-SECRET',
  postingPassword: 'post-pw-0d7e-SECRET',
  oauthClientSecret: 'oauth-sec-7a3b-SECRET',
  webhookClientSecret: 'webhook-sec-2e8f-SECRET',
};

export const testCredentials: BankCredentials = {
  apiToken: new Secret(testSecrets.apiToken),
  username: 'test-user',
  password: new Secret(testSecrets.password),
  billingUsername: 'test-billing',
  billingPassword: new Secret(testSecrets.billingPassword),
  postingUsername: 'test-posting',
  postingPassword: new Secret(testSecrets.postingPassword),
  oauthClientId: 'test-oauth-client',
  oauthClientSecret: new Secret(testSecrets.oauthClientSecret),
};

/** The webhook pair the clients sign their collection-service calls with, in tests. */
export const testCollectionCredentials: CollectionCredentials = {
  clientId: 'test-collection',
  clientSecret: new Secret(testSecrets.webhookClientSecret),
};

/** Every area at one base URL (the fake bank serves them all). */
export function urlsAt(base: string): BankUrls {
  return { base, gateway: base, billing: base, posting: base, wallet: base, collection: base };
}

export interface TestClientsOptions {
  timeoutMs?: number;
  credentials?: BankCredentials;
  collectionCredentials?: CollectionCredentials;
  /** `BANK_TIMEZONE`; default Africa/Lagos. */
  timezone?: string;
}

/** Clients over `urls`, closed when the test ends; `logs` holds every log line written as JSON. */
export function createTestClients(urls: BankUrls, options: TestClientsOptions = {}) {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const metrics = createMetrics();
  const clients = createBankClients({
    urls,
    credentials: options.credentials ?? testCredentials,
    collectionCredentials: options.collectionCredentials ?? testCollectionCredentials,
    timezone: options.timezone ?? 'Africa/Lagos',
    timeoutMs: options.timeoutMs ?? 2_000,
    logger: pino({ level: 'debug' }, sink),
    metrics,
  });
  onCleanup(() => clients.close());
  return { clients, logs, metrics };
}

/**
 * Awaits a failure and checks it is an UpstreamError with `code`, whose message and extensions
 * hold no URL, no address and none of `secrets`.
 */
export async function expectUpstreamError(
  promise: Promise<unknown>,
  code: UpstreamErrorCode,
  secrets: readonly string[] = Object.values(testSecrets),
): Promise<UpstreamError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  const failure = error as UpstreamError;
  expect(failure.extensions.code).toBe(code);
  expectNoLeak(JSON.stringify({ message: failure.message, error: failure.toJSON() }), secrets);
  expect(failure.message).not.toMatch(/\n\s+at /);
  return failure;
}

/** Fails when `text` holds a URL, a loopback address or any of `secrets`. */
export function expectNoLeak(text: string, secrets: readonly string[] = Object.values(testSecrets)): void {
  expect(text).not.toMatch(/https?:\/\//);
  expect(text).not.toContain('127.0.0.1');
  for (const secret of secrets) expect(text).not.toContain(secret);
}

/** The sandbox bank's credentials, as the configuration holds them in sandbox mode. */
export const sandboxBankCredentials: BankCredentials = {
  apiToken: new Secret(sandboxCredentials.apiToken),
  username: sandboxCredentials.username,
  password: new Secret(sandboxCredentials.password),
  billingUsername: sandboxCredentials.billingUsername,
  billingPassword: new Secret(sandboxCredentials.billingPassword),
  postingUsername: sandboxCredentials.postingUsername,
  postingPassword: new Secret(sandboxCredentials.postingPassword),
  oauthClientId: sandboxCredentials.oauthClientId,
  oauthClientSecret: new Secret(sandboxCredentials.oauthClientSecret),
};

/** The sandbox's webhook pair, as the configuration holds it in sandbox mode. */
export const sandboxCollectionCredentials: CollectionCredentials = {
  clientId: sandboxCredentials.webhookClientId,
  clientSecret: new Secret(sandboxCredentials.webhookClientSecret),
};

/** The sandbox's secret values, for leak checks. */
export const sandboxSecrets = [
  sandboxCredentials.apiToken,
  sandboxCredentials.password,
  sandboxCredentials.billingPassword,
  sandboxCredentials.postingPassword,
  sandboxCredentials.oauthClientSecret,
  sandboxCredentials.webhookClientSecret,
];
