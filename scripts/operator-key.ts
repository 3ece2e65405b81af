// The private key of `npm run token -- --key <file>`: a JWK (with "d") or a PEM (PKCS#8, or the
// PKCS#1 and SEC1 forms OpenSSL also writes), and the algorithm it signs with, as the key says.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';

/** A problem with the key file, said so that the person who gave it knows what to give instead. */
export class KeyFileError extends Error {}

/** The JWS algorithm of each key type (and curve) a token can be signed with. */
const ALGORITHMS: Record<string, string> = {
  rsa: 'RS256',
  'rsa-pss': 'PS256',
  'ec:prime256v1': 'ES256',
  'ec:secp384r1': 'ES384',
  'ec:secp521r1': 'ES512',
  ed25519: 'EdDSA',
};

/** The private key in the file at `path`, and its algorithm: a JWK's own `alg` where it names one. */
export function readPrivateKey(path: string): { key: KeyObject; alg: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    throw new KeyFileError(`--key ${path} cannot be read (${code === 'ENOENT' ? 'no such file' : (code ?? String(error))})`);
  }
  const { key, declaredAlg } = text.trimStart().startsWith('{') ? fromJwk(path, text) : fromPem(path, text);
  return { key, alg: declaredAlg ?? algorithmOf(path, key) };
}

/** The public JWKS of `key`, published under `kid`: what AUTH_JWKS_URL is pointed at (as a file, or served). */
export function publicJwks(key: KeyObject, alg: string, kid: string): { keys: JWK[] } {
  return { keys: [{ ...(createPublicKey(key).export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' }] };
}

function fromJwk(path: string, text: string): { key: KeyObject; declaredAlg: string | undefined } {
  let jwk: JWK & { keys?: unknown };
  try {
    jwk = JSON.parse(text) as JWK & { keys?: unknown };
  } catch {
    throw new KeyFileError(`--key ${path} is neither a JWK (its JSON does not parse) nor a PEM`);
  }
  if (jwk.keys !== undefined) throw new KeyFileError(`--key ${path} is a JWKS: give the one private JWK to sign with`);
  if (jwk.d === undefined) throw new KeyFileError(`--key ${path} is a public JWK (no "d"): give the private key`);
  try {
    return { key: createPrivateKey({ key: jwk, format: 'jwk' }), declaredAlg: jwk.alg };
  } catch (error) {
    throw new KeyFileError(`--key ${path} is not a private key Node can read: ${(error as Error).message}`);
  }
}

function fromPem(path: string, text: string): { key: KeyObject; declaredAlg: undefined } {
  if (/-----BEGIN (RSA )?PUBLIC KEY-----/.test(text) || text.includes('-----BEGIN CERTIFICATE-----'))
    throw new KeyFileError(`--key ${path} holds a public key or certificate: give the private key`);
  if (text.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----'))
    throw new KeyFileError(`--key ${path} is encrypted: decrypt it first (openssl pkcs8 -in … -out …)`);
  if (!text.includes('PRIVATE KEY-----')) throw new KeyFileError(`--key ${path} is neither a JWK nor a PEM private key`);
  try {
    return { key: createPrivateKey(text), declaredAlg: undefined };
  } catch (error) {
    throw new KeyFileError(`--key ${path} is not a private key Node can read: ${(error as Error).message}`);
  }
}

function algorithmOf(path: string, key: KeyObject): string {
  const type = key.asymmetricKeyType ?? 'unknown';
  const alg = ALGORITHMS[type === 'ec' ? `ec:${key.asymmetricKeyDetails?.namedCurve}` : type];
  if (alg === undefined)
    throw new KeyFileError(
      `--key ${path} is a ${type} key that does not sign JWTs here: use an RSA, EC (P-256, P-384, P-521) or Ed25519 key`,
    );
  return alg;
}
