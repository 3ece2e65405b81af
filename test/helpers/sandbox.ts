/** The sandbox bank in tests: one per test, closed after it, and real HTTP through undici. */
import { request } from 'undici';
import { beforeEach } from 'vitest';
import { sandboxCredentials } from '../../src/sandbox/credentials.ts';
import { startBankSandbox, type BankSandbox, type BankSandboxOptions, type ReceivedRequest } from '../../src/sandbox/index.ts';
import { onCleanup } from './cleanup.ts';

/** Starts a sandbox bank on a free port, closed when the current test finishes. */
export async function startSandbox(options: BankSandboxOptions = {}): Promise<BankSandbox> {
  const sandbox = await startBankSandbox(options);
  onCleanup(() => sandbox.close());
  return sandbox;
}

/** Starts a fresh sandbox before each test (closed after it); call the getter inside tests. */
export function useSandbox(options: BankSandboxOptions = {}): () => BankSandbox {
  let sandbox: BankSandbox | undefined;
  beforeEach(async () => {
    sandbox = await startSandbox(options);
  });
  return () => {
    if (sandbox === undefined) throw new Error('useSandbox() getter called outside a test');
    return sandbox;
  };
}

/** What the sandbox received for the last request to a path ending in `pathEnd` (secrets as `sandbox.fingerprint` shows them). */
export function lastReceived(sandbox: BankSandbox, pathEnd: string): ReceivedRequest {
  const found = sandbox.received.findLast((request) => request.path.endsWith(pathEnd));
  if (found === undefined) throw new Error(`the sandbox received nothing at …${pathEnd}`);
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
