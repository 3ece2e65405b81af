// Who may call: the token issuer's keys and claims, where the callback protocol may call back, and
// the webhook's own port.
import { isIP } from 'node:net';
import type { AuthSettings } from '../auth/authenticator.ts';
import { DEVELOPMENT_JWKS_PATH } from '../auth/development-key.ts';
import { jwksFilePath } from '../auth/key-set.ts';
import { parseCallbackPrefix, type CallbackUrls } from '../callback-urls.ts';
import { integer, isHttpUrl, sandboxRules, type Source } from './source.ts';

/** What the authorization settings come to. */
export interface AuthConfig {
  /** `AUTH_*`: undefined when authorization is off (no AUTH_JWKS_URL, under the sandbox rules only). */
  auth: AuthSettings | undefined;
  /** `SUBSCRIPTION_CALLBACK_URLS`: where the callback protocol may call back. */
  callbackUrls: CallbackUrls;
  /** `WEBHOOK_PORT`: the webhook's (and health's) own port, when set. */
  webhookPort: number | undefined;
}

/** The AUTH_* settings, SUBSCRIPTION_CALLBACK_URLS and WEBHOOK_PORT, every problem added to `source.problems`. */
export function readAuth(source: Source): AuthConfig {
  return { auth: readTokenSettings(source), callbackUrls: readCallbackUrls(source), webhookPort: readWebhookPort(source) };
}

/** How long a fetched JWKS counts as current by default: a key withdrawn at the issuer stops working within it. */
const DEFAULT_KEYS_MAX_AGE_S = 600;

function readTokenSettings(source: Source): AuthSettings | undefined {
  const jwksUrl = source.read('AUTH_JWKS_URL');
  const issuer = source.read('AUTH_ISSUER');
  const audience = source.read('AUTH_AUDIENCE');
  const accountsClaim = source.read('AUTH_ACCOUNTS_CLAIM') ?? 'accounts';
  const keysMaxAgeS = integer(source, 'AUTH_JWKS_MAX_AGE_S', DEFAULT_KEYS_MAX_AGE_S, 1, 86_400);
  const { closedBy } = source;
  // Outside the sandbox rules nothing runs open: a forgotten setting must not serve money records
  // to anyone, nor accept tokens the issuer minted for another API.
  if (closedBy !== undefined) {
    if (jwksUrl === undefined) source.problems.push(`AUTH_JWKS_URL is required when ${closedBy}: where the token issuer publishes its keys (https://…/.well-known/jwks.json)`);
    if (issuer === undefined) source.problems.push(`AUTH_ISSUER is required when ${closedBy}: the \`iss\` every token must carry`);
    if (audience === undefined) source.problems.push(`AUTH_AUDIENCE is required when ${closedBy}: the \`aud\` every token must carry (without it, tokens the issuer mints for other APIs would be accepted)`);
  }
  if (jwksUrl === undefined) {
    if (closedBy === undefined) {
      for (const [name, value] of [['AUTH_ISSUER', issuer], ['AUTH_AUDIENCE', audience]] as const) {
        if (value !== undefined) source.problems.push(`${name} is set but AUTH_JWKS_URL is not, so no token would be checked: set AUTH_JWKS_URL too, or unset ${name}`);
      }
    }
    return undefined;
  }
  if (!isHttpUrl(jwksUrl) && !/^file:.+/.test(jwksUrl)) {
    source.problems.push('AUTH_JWKS_URL must be an http(s) URL or file:<path> of a JWKS document');
  } else if (closedBy !== undefined && jwksUrl.startsWith('http:') && !isLoopbackUrl(jwksUrl)) {
    // Keys fetched in clear text can be swapped on the way: anyone on the path could mint tokens.
    source.problems.push(`AUTH_JWKS_URL must be https:// (or file:, or http:// to a loopback address) when ${closedBy}`);
  } else if (closedBy !== undefined && jwksUrl.startsWith('file:') && jwksFilePath(jwksUrl) === DEVELOPMENT_JWKS_PATH) {
    source.problems.push(`AUTH_JWKS_URL names the repository's published development keys, refused when ${closedBy}: point it at your token issuer's JWKS`);
  }
  if (issuer === undefined && closedBy === undefined) source.problems.push('AUTH_ISSUER is required with AUTH_JWKS_URL: the `iss` every token must carry');
  return { jwksUrl, issuer: issuer ?? '', audience, accountsClaim, keysMaxAgeMs: keysMaxAgeS * 1000, refuseDevelopmentKey: !sandboxRules(source) };
}

function isLoopbackUrl(value: string): boolean {
  const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * `SUBSCRIPTION_CALLBACK_URLS`: comma-separated URL prefixes. Unset: any URL under the sandbox
 * rules; none elsewhere, where the callback protocol is then off (it would otherwise let a caller
 * make us POST to any address of our network).
 */
function readCallbackUrls(source: Source): CallbackUrls {
  const value = source.read('SUBSCRIPTION_CALLBACK_URLS');
  if (value === undefined) return sandboxRules(source) ? 'any' : [];
  const prefixes = [];
  for (const entry of value.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const prefix = parseCallbackPrefix(entry);
    if (prefix === undefined) source.problems.push(`SUBSCRIPTION_CALLBACK_URLS: "${entry}" is not an absolute http(s) URL without credentials, query or fragment`);
    else prefixes.push(prefix);
  }
  if (prefixes.length === 0 && !source.problems.some((p) => p.startsWith('SUBSCRIPTION_CALLBACK_URLS'))) {
    source.problems.push('SUBSCRIPTION_CALLBACK_URLS lists no URL');
  }
  return prefixes;
}

function readWebhookPort(source: Source): number | undefined {
  if (source.read('WEBHOOK_PORT') === undefined) return undefined;
  const port = integer(source, 'WEBHOOK_PORT', 0, 0, 65_535);
  const main = source.read('PORT') ?? '4001';
  if (port !== 0 && String(port) === main) source.problems.push('WEBHOOK_PORT must differ from PORT: the webhook gets a port of its own');
  return port;
}
