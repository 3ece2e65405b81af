import { readFileSync } from 'node:fs';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_JWKS_PATH, DEVELOPMENT_KEY_THUMBPRINTS, DEVELOPMENT_PRIVATE_KEY_PATH } from './development-key.ts';

describe('the published development key', () => {
  it('is refused by the thumbprint of the key in dev/, its private half beside it', async () => {
    const { keys } = JSON.parse(readFileSync(DEVELOPMENT_JWKS_PATH, 'utf8')) as { keys: JWK[] };
    const thumbprints = await Promise.all(keys.map((key) => calculateJwkThumbprint(key)));
    expect(new Set(thumbprints)).toEqual(DEVELOPMENT_KEY_THUMBPRINTS);
    const { d, ...publicHalf } = JSON.parse(readFileSync(DEVELOPMENT_PRIVATE_KEY_PATH, 'utf8')) as JWK;
    expect(d).toBeTruthy();
    expect(await calculateJwkThumbprint(publicHalf)).toBe(thumbprints[0]);
  });
});
