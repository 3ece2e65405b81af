/**
 * The sandbox bank in tests: one per test, closed after it, and real HTTP through undici. Tests of
 * the wire format reach it through a recording proxy (`useRecordedSandbox`): the sandbox keeps no log.
 */
import { request } from 'undici';
import { beforeEach } from 'vitest';
import { sandboxCredentials } from '../../src/sandbox/credentials.ts';
import { startBankSandbox, type BankSandbox, type BankSandboxOptions, type SandboxUrls } from '../../src/sandbox/index.ts';
import { onCleanup } from './cleanup.ts';
import { startRecordingProxy, type ReceivedRequest, type RecordingProxy } from './recording-proxy.ts';

/** Starts a sandbox bank on a free port, closed when the current test finishes. */
export async function startSandbox(options: BankSandboxOptions = {}): Promise<BankSandbox> {
  const sandbox = await startBankSandbox(options);
  onCleanup(() => sandbox.close());
  return sandbox;
}

/** Starts a fresh sandbox before each test (closed after it); call the getter inside tests. */
export function useSandbox(options: BankSandboxOptions = {}): () => BankSandbox {
  return eachTest(() => startSandbox(options));
}

/** A sandbox bank behind a recording proxy: every area's URL leads through the proxy, which keeps what it was sent. */
export interface RecordedSandbox extends Pick<RecordingProxy, 'received' | 'fingerprint'> {
  urls: SandboxUrls;
  /** The sandbox bank's collection console and webhook target, reached directly. */
  collection: BankSandbox['collection'];
}

/** Starts a sandbox bank and a recording proxy in front of it, both closed when the current test finishes. */
export async function startRecordedSandbox(options: BankSandboxOptions = {}): Promise<RecordedSandbox> {
  const sandbox = await startSandbox(options);
  const origin = new URL(sandbox.urls.base).origin;
  const proxy = await startRecordingProxy(origin);
  const through = (url: string) => proxy.url + url.slice(origin.length);
  const { base, gateway, billing, posting, wallet, collection } = sandbox.urls;
  return {
    urls: {
      base: through(base),
      gateway: through(gateway),
      billing: through(billing),
      posting: through(posting),
      wallet: through(wallet),
      collection: through(collection),
    },
    collection: sandbox.collection,
    received: proxy.received,
    fingerprint: proxy.fingerprint,
  };
}

/** Starts a fresh recorded sandbox before each test (closed after it); call the getter inside tests. */
export function useRecordedSandbox(options: BankSandboxOptions = {}): () => RecordedSandbox {
  return eachTest(() => startRecordedSandbox(options));
}

function eachTest<T>(start: () => Promise<T>): () => T {
  let started: T | undefined;
  beforeEach(async () => {
    started = await start();
  });
  return () => {
    if (started === undefined) throw new Error('the getter was called outside a test');
    return started;
  };
}

/** The last request recorded to a path ending in `pathEnd` (secrets as `fingerprint` shows them). */
export function lastReceived(recorded: Pick<RecordingProxy, 'received'>, pathEnd: string): ReceivedRequest {
  const found = recorded.received.findLast((entry) => entry.path.endsWith(pathEnd));
  if (found === undefined) throw new Error(`the bank received nothing at …${pathEnd}`);
  return found;
}

/** The account area's three credential headers, as the live client sends them. */
export const accountHeaders = {
  authorization: sandboxCredentials.apiToken,
  username: sandboxCredentials.username,
  password: sandboxCredentials.password,
};

/** An HTTP Basic Authorization value: base64 of the UTF-8 `user:password`. */
export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON; undefined when it is empty. */
  json: any;
}

/** One request over real HTTP, read whole; redirects are not followed. */
export async function call(
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const response = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, json: text === '' ? undefined : JSON.parse(text) };
}

/** A POST with a JSON body, as the live clients send one. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(url, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Base64 of UTF-8 text, as op 8 wants its fields. */
export function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
