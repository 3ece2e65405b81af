import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { PRODUCTION_SANDBOX } from './helpers/production.ts';
import { tempDirectory } from './helpers/stores.ts';
import { bearer } from './helpers/tokens.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'token.ts');
const ISSUER = 'https://issuer.rehearsal.test';
const AUDIENCE = 'bank-subgraph-rehearsal';

/** Runs `npm run token -- <args>` (the script itself, with the test's Node), in an empty directory (no .env). */
async function token(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: tempDirectory(), env: { PATH: process.env.PATH } });
  return run.then(
    ({ stdout, stderr }) => ({ code: 0, stdout: stdout.trim(), stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout.trim(), stderr: error.stderr }),
  );
}

/** A fresh key pair of `type`, its private half written to a file as `format` (PKCS#8 PEM or JWK); the file's path. */
function privateKeyFile(type: 'rsa' | 'ec' | 'ed25519', format: 'pem' | 'jwk'): string {
  const { privateKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  const path = join(tempDirectory(), `key.${format === 'pem' ? 'pem' : 'json'}`);
  writeFileSync(
    path,
    format === 'pem' ? privateKey.export({ type: 'pkcs8', format: 'pem' }) : JSON.stringify(privateKey.export({ format: 'jwk' })),
  );
  return path;
}

describe('npm run token -- --key: tokens signed by a key of your own', () => {
  it.each([
    ['an RSA PKCS#8 PEM', 'rsa', 'pem', 'RS256'],
    ['a P-256 JWK', 'ec', 'jwk', 'ES256'],
    ['an Ed25519 PKCS#8 PEM', 'ed25519', 'pem', 'EdDSA'],
  ] as const)(
    'signs with %s (%s) for an app under the production rules whose AUTH_JWKS_URL is a file: JWKS of its public key, and the app refuses another audience',
    async (_what, type, format, alg) => {
      const key = privateKeyFile(type, format);
      const jwks = await token(['--key', key, '--kid', 'rehearsal-1', '--jwks']);
      expect(jwks.code).toBe(0);
      expect(JSON.parse(jwks.stdout)).toEqual({ keys: [expect.objectContaining({ kid: 'rehearsal-1', alg, use: 'sig' })] });
      expect(jwks.stdout).not.toContain('"d"');
      const jwksPath = join(tempDirectory(), 'jwks.json');
      writeFileSync(jwksPath, jwks.stdout);
      const app = await startApp({
        ...PRODUCTION_SANDBOX,
        AUTH_JWKS_URL: `file:${jwksPath}`,
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
      });

      const mint = (audience: string) =>
        token([
          '--key',
          key,
          '--kid',
          'rehearsal-1',
          '--issuer',
          ISSUER,
          '--audience',
          audience,
          '--scope',
          'collections:read',
          '--accounts',
          '0123456789',
        ]);
      const minted = await mint(AUDIENCE);
      expect(minted.code).toBe(0);
      const header = JSON.parse(Buffer.from(minted.stdout.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
      expect(header).toEqual({ alg, kid: 'rehearsal-1', typ: 'JWT' });
      const QUERY = '{ collectionNotifications(accountNumber: "0123456789") { nodes { settlementId } } }';
      expect(await app.query(QUERY, undefined, bearer(minted.stdout))).toMatchObject({ data: { collectionNotifications: { nodes: [] } } });

      const elsewhere = await mint('another-api');
      const refused = await app.query(QUERY, undefined, bearer(elsewhere.stdout));
      expect(refused.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    },
  );

  it('refuses --key without --kid, --issuer and --audience, naming the missing ones, and prints no token', async () => {
    const key = privateKeyFile('ed25519', 'pem');
    const bare = await token(['--key', key]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^token: --key needs --kid, --issuer and --audience too\n/);
    expect(bare.stdout).toBe('');
    const partly = await token(['--key', key, '--kid', 'k', '--issuer', ISSUER]);
    expect(partly.stderr).toMatch(/^token: --key needs --audience too\n/);
  });

  it.each([
    ['a missing file', () => join(tempDirectory(), 'absent.pem'), 'cannot be read (no such file)'],
    ['a file that holds no key', () => writtenFile('key.pem', 'not a key\n'), 'is neither a JWK nor a PEM private key'],
    ['a JSON file that is no JWK', () => writtenFile('key.json', '{"kty": "EC"'), 'is neither a JWK (its JSON does not parse) nor a PEM'],
    [
      'a public JWK',
      () => writtenFile('key.json', JSON.stringify(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }))),
      'is a public JWK (no "d")',
    ],
    [
      'a public PEM',
      () => writtenFile('key.pem', generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString()),
      'holds a public key or certificate',
    ],
  ])('refuses %s as --key, naming it and what to give instead', async (_what, file, message) => {
    const path = file();
    const refused = await token(['--key', path, '--kid', 'k', '--issuer', ISSUER, '--audience', AUDIENCE]);
    expect(refused.code).toBe(2);
    // The first line says what is wrong; the usage follows.
    expect(refused.stderr.split('\n')[0]).toContain(`token: --key ${path} ${message}`);
    expect(refused.stdout).toBe('');
  });
});

function writtenFile(name: string, content: string): string {
  const path = join(tempDirectory(), name);
  writeFileSync(path, content);
  return path;
}
