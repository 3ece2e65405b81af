// Where Apollo Router's callback protocol may call back: the prefixes of SUBSCRIPTION_CALLBACK_URLS,
// compared on parsed, normalised URLs (scheme, host, port, then whole path segments), never as text:
// "https://router.internal@attacker.example", "/callback/../admin" or "/callbackevil" match nothing.

/** Any URL (under the sandbox rules, when unset), or only those under one of these prefixes (none: the protocol is off). */
export type CallbackUrls = 'any' | readonly URL[];

/** `entry` as a prefix: an absolute http(s) URL without credentials, query or fragment; undefined otherwise. */
export function parseCallbackPrefix(entry: string): URL | undefined {
  const url = parseHttpUrl(entry);
  if (url === undefined || url.search !== '' || url.hash !== '') return undefined;
  return url;
}

/**
 * The callback URL a subscription request names, normalised, when `allowed` lets us call it;
 * undefined when it does not (or it is no absolute http(s) URL without credentials).
 */
export function allowedCallbackUrl(allowed: CallbackUrls, candidate: unknown): URL | undefined {
  const url = typeof candidate === 'string' ? parseHttpUrl(candidate) : undefined;
  if (url === undefined) return undefined;
  if (allowed === 'any') return url;
  return allowed.some((prefix) => isUnder(url, prefix)) ? url : undefined;
}

function parseHttpUrl(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return url;
}

/** Same origin (scheme, host, port, as the URL parser normalised them), and the path at or below the prefix's. */
function isUnder(url: URL, prefix: URL): boolean {
  if (url.origin !== prefix.origin) return false;
  const base = prefix.pathname;
  if (base === '/' || url.pathname === base) return true;
  return url.pathname.startsWith(base.endsWith('/') ? base : `${base}/`);
}
