import { describe, expect, it } from 'vitest';
import { allowedCallbackUrl, parseCallbackPrefix } from './callback-urls.ts';

const allowed = ['https://router.internal/callback', 'http://10.0.0.5:4000/'].map((entry) => parseCallbackPrefix(entry)!);
const check = (url: string) => allowedCallbackUrl(allowed, url)?.href;

describe('allowedCallbackUrl', () => {
  it('allows URLs at or under a prefix, normalised as fetch will read them', () => {
    expect(check('https://router.internal/callback')).toBe('https://router.internal/callback');
    expect(check('https://ROUTER.internal:443/callback/abc-123')).toBe('https://router.internal/callback/abc-123');
    expect(check('https://router.internal/callback/a/../b')).toBe('https://router.internal/callback/b');
    expect(check('http://10.0.0.5:4000/anything')).toBe('http://10.0.0.5:4000/anything');
  });

  it('refuses what a text prefix would let through', () => {
    for (const url of [
      'https://router.internal/callbackevil',
      'https://router.internal/callback/../admin',
      'https://router.internal/%2e%2e/admin',
      'https://router.internal@attacker.example/callback/1',
      'https://router.internal.attacker.example/callback/1',
      'http://router.internal/callback/1',
      'https://router.internal:8443/callback/1',
      'http://10.0.0.5:4001/',
      'https://user:pw@router.internal/callback/1',
      'file:///etc/passwd',
      'not a url',
    ]) {
      expect(check(url), url).toBeUndefined();
    }
    expect(allowedCallbackUrl(allowed, 42)).toBeUndefined();
  });

  it('allows any http(s) URL when any is allowed, and none when the list is empty', () => {
    expect(allowedCallbackUrl('any', 'http://127.0.0.1:1234/cb')?.href).toBe('http://127.0.0.1:1234/cb');
    expect(allowedCallbackUrl('any', 'gopher://x/')).toBeUndefined();
    expect(allowedCallbackUrl([], 'https://router.internal/callback')).toBeUndefined();
  });
});
