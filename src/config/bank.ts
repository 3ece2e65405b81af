// The bank: its mode, its URLs (live only), the credentials we present, the webhook's, time-outs and zone.
import { IANAZone } from 'luxon';
import type { WebhookCredentials } from '../collection/signature.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import type { BankCredentials, BankUrls } from '../upstream/types.ts';
import { integer, isHttpUrl, type Source } from './source.ts';

/** What both modes share: the credentials we present, time-outs and the bank's zone. */
interface UpstreamSettings {
  credentials: BankCredentials;
  timeoutMs: number;
  bankListTtlMs: number;
  /** `BANK_LIST_STALE_S`: how long past its freshness a reference list may answer a failed refresh; 0: never. */
  bankListStaleMs: number;
  /** IANA zone of the bank's local times (`tranDateTime`). */
  timezone: string;
}

/**
 * The bank we talk to. In sandbox mode the app starts the in-process sandbox and uses its URLs, so
 * only live mode carries URLs; the union lets the compiler see that.
 */
export type UpstreamConfig =
  | (UpstreamSettings & { mode: 'sandbox' })
  | (UpstreamSettings & { mode: 'live'; urls: BankUrls });

/**
 * `BANK_LIST_TTL_S`: how long the bank list and bill categories are fresh, in seconds; also their
 * public cache maxAge, which the schema carries (so `npm run schema:print` reads it too).
 */
export function readBankListTtlS(source: Source): number {
  return integer(source, 'BANK_LIST_TTL_S', 600, 0, 86_400);
}

/** The bank: its mode, URLs (live only), our credentials, the webhook's, time-outs and zone. */
export function readBank(source: Source): { upstream: UpstreamConfig; webhook: WebhookCredentials } {
  const given = source.read('UPSTREAM_MODE');
  // In production the bank is chosen on purpose: a forgotten setting must not start the sandbox.
  if (given === undefined && source.production) {
    source.problems.push('UPSTREAM_MODE is required when NODE_ENV=production: "live" (or "sandbox" for a demo deployment)');
  }
  const mode = given ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') {
    source.problems.push(`UPSTREAM_MODE must be "sandbox" or "live"`);
  }
  const live = mode === 'live';
  const credentials = readBankCredentials(source, live);
  const webhook = readWebhookCredentials(source);
  const urls = live ? readBankUrls(source) : undefined;

  const timezone = source.read('BANK_TIMEZONE') ?? 'Africa/Lagos';
  if (!IANAZone.isValidZone(timezone)) {
    source.problems.push(`BANK_TIMEZONE must be an IANA time zone such as Africa/Lagos, got "${timezone}"`);
  }
  const settings: UpstreamSettings = {
    credentials,
    timeoutMs: integer(source, 'BANK_TIMEOUT_MS', 10_000, 1, 600_000),
    bankListTtlMs: readBankListTtlS(source) * 1000,
    bankListStaleMs: integer(source, 'BANK_LIST_STALE_S', 86_400, 0, 2_592_000) * 1000,
    timezone,
  };
  const upstream: UpstreamConfig = urls ? { mode: 'live', urls, ...settings } : { mode: 'sandbox', ...settings };
  return { upstream, webhook };
}

/**
 * The credentials we present to the bank. In live mode every one must be given; in sandbox mode they
 * default to the sandbox's, so `npm start` needs no setup (they open only the in-process sandbox).
 */
function readBankCredentials(source: Source, live: boolean): BankCredentials {
  const credential = (name: string, sandboxValue: string): string => {
    const value = source.read(name);
    if (value !== undefined) return value;
    if (live) source.problems.push(`${name} is required when UPSTREAM_MODE=live`);
    return sandboxValue;
  };
  const secret = (name: string, sandboxValue: string) => new Secret(credential(name, sandboxValue));
  return {
    apiToken: secret('BANK_API_TOKEN', sandboxCredentials.apiToken),
    username: credential('BANK_USERNAME', sandboxCredentials.username),
    password: secret('BANK_PASSWORD', sandboxCredentials.password),
    billingUsername: credential('BILLING_USERNAME', sandboxCredentials.billingUsername),
    billingPassword: secret('BILLING_PASSWORD', sandboxCredentials.billingPassword),
    postingUsername: credential('POSTING_USERNAME', sandboxCredentials.postingUsername),
    postingPassword: secret('POSTING_PASSWORD', sandboxCredentials.postingPassword),
    oauthClientId: credential('OAUTH_CLIENT_ID', sandboxCredentials.oauthClientId),
    oauthClientSecret: secret('OAUTH_CLIENT_SECRET', sandboxCredentials.oauthClientSecret),
  };
}

/**
 * What the bank signs its deliveries with. A `00` means we own the transfer, so wherever the sandbox
 * rules do not apply these must be given, and the sandbox's published values, which anyone can read
 * in the README, are refused there: with them, anyone could sign a forged notification.
 */
function readWebhookCredentials(source: Source): WebhookCredentials {
  const published = new Set<string>([sandboxCredentials.webhookClientId, sandboxCredentials.webhookClientSecret]);
  const read = (name: string, sandboxValue: string | undefined): string | undefined => {
    const value = source.read(name);
    if (value === undefined && sandboxValue !== undefined && source.closedBy !== undefined) {
      source.problems.push(`${name} is required when ${source.closedBy}`);
    } else if (value !== undefined && source.closedBy !== undefined && published.has(value)) {
      source.problems.push(`${name} is the sandbox's published value, refused when ${source.closedBy}: set the one agreed with the bank`);
    }
    return value ?? sandboxValue;
  };
  const clientId = read('WEBHOOK_CLIENT_ID', sandboxCredentials.webhookClientId)!;
  const clientSecret = read('WEBHOOK_CLIENT_SECRET', sandboxCredentials.webhookClientSecret)!;
  const previous = read('WEBHOOK_CLIENT_SECRET_PREVIOUS', undefined);
  if (previous !== undefined && previous === clientSecret) {
    source.problems.push('WEBHOOK_CLIENT_SECRET_PREVIOUS must differ from WEBHOOK_CLIENT_SECRET (the old secret during a rotation; unset it once the bank uses the new one)');
  }
  return {
    clientId,
    clientSecret: new Secret(clientSecret),
    previousSecret: previous === undefined ? undefined : new Secret(previous),
  };
}

/** The live bank's URLs, each required (the gateway defaults to the base) and absolute http(s). */
function readBankUrls(source: Source): BankUrls {
  const url = (name: string, fallback?: string): string => {
    const value = source.read(name) ?? fallback;
    if (value === undefined) {
      source.problems.push(`${name} is required when UPSTREAM_MODE=live`);
      return '';
    }
    if (!isHttpUrl(value)) source.problems.push(`${name} must be an absolute http(s) URL`);
    // A trailing slash would double up with the paths, which all start with one.
    return value.replace(/\/+$/, '');
  };
  const base = url('BANK_BASE_URL');
  // Confirmation asks the collection service about every stored notification: required unless it is off.
  const confirming = (source.read('COLLECTION_CONFIRMATION') ?? 'on').toLowerCase() !== 'off';
  const collection = confirming || source.read('BANK_COLLECTION_URL') !== undefined ? url('BANK_COLLECTION_URL') : undefined;
  return {
    base,
    gateway: url('BANK_GATEWAY_URL', base === '' ? undefined : base),
    billing: url('BANK_BILLING_URL'),
    posting: url('BANK_POSTING_URL'),
    wallet: url('BANK_WALLET_URL'),
    collection,
  };
}

