// `npm run token -- [--scope "collections:read accounts:read"] [--accounts 0123456789,1234567890] [--expires 1h]
//   [--key <private JWK or PEM file> --kid <kid> --issuer <iss> --audience <aud>] [--jwks]`:
// prints a token. By default it is signed by the published development key (dev/), for a local
// subgraph started with AUTH_JWKS_URL=file:dev/auth-jwks.json; a production subgraph refuses that key.
// With --key it is signed by a key of the operator's own (RS256, ES256 or EdDSA, as the key says), for
// a staging setup or the live-mode rehearsal; --jwks prints that key's public JWKS for AUTH_JWKS_URL.
import { existsSync } from 'node:fs';
import { DEVELOPMENT_ISSUER } from '../src/auth/development-key.ts';
import { signDevelopmentToken, signToken } from './development-token.ts';
import { KeyFileError, publicJwks, readPrivateKey } from './operator-key.ts';
import { readCommandLine } from './command-line.ts';

const USAGE = `usage: npm run token -- [--scope "collections:read accounts:read"] [--accounts 0123456789,1234567890]
       [--expires 1h] [--issuer ${DEVELOPMENT_ISSUER}] [--audience aud] [--subject developer]
       npm run token -- --key <private JWK or PEM file> --kid <kid> --issuer <iss> --audience <aud> [--scope …] [--accounts …]
       npm run token -- --key <private JWK or PEM file> --kid <kid> --jwks
Scopes: accounts:read, kyc:read, collections:read, collections:read:all, collections:review, collections:reconcile, merchant:auth,
transactions:authorize.
--expires takes seconds, or a number with s, m, h or d. Without --key the token is signed by the
development key (accepted only under the sandbox rules); the issuer and audience default to AUTH_ISSUER
and AUTH_AUDIENCE (from the environment or .env), else the development issuer and no audience.
--key signs with a key of your own: a private JWK, or a PEM (PKCS#8; RSA, EC or Ed25519), the algorithm
as the key says; --kid, --issuer and --audience are then required, as the subgraph checks them.
--jwks prints the public JWKS of --key (under --kid), to save as the file AUTH_JWKS_URL=file:… names.
Send the token as "Authorization: Bearer <token>", or as connectionParams.Authorization over graphql-ws.`;

function fail(message: string): never {
  console.error(`token: ${message}\n${USAGE}`);
  process.exit(2);
}

if (existsSync('.env')) process.loadEnvFile('.env');
const options = {
  scope: { type: 'string', default: '' },
  accounts: { type: 'string', default: '' },
  expires: { type: 'string', default: '1h' },
  issuer: { type: 'string' },
  audience: { type: 'string' },
  subject: { type: 'string', default: 'developer' },
  key: { type: 'string' },
  kid: { type: 'string' },
  jwks: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

const values = readCommandLine(options, USAGE, fail);

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const expires = /^(\d+)([smhd]?)$/.exec(values.expires);
if (!expires) fail(`--expires must be seconds or a number with s, m, h or d, got "${values.expires}"`);
const lifetimeS = Number(expires[1]) * UNITS[(expires[2] || 's') as keyof typeof UNITS];
const accounts = values.accounts
  .split(',')
  .map((account) => account.trim())
  .filter((account) => account !== '');
for (const account of accounts) if (!/^\d{10}$/.test(account)) fail(`--accounts: "${account}" is not a 10-digit account number`);

const claims = { scope: values.scope, accounts, lifetimeS, subject: values.subject };
if (values.key === undefined) {
  if (values.kid !== undefined || values.jwks)
    fail(`--${values.jwks ? 'jwks' : 'kid'} needs --key: the development key has its own kid and JWKS (dev/)`);
  console.log(
    await signDevelopmentToken({
      ...claims,
      issuer: values.issuer ?? (process.env.AUTH_ISSUER || DEVELOPMENT_ISSUER),
      audience: values.audience ?? (process.env.AUTH_AUDIENCE || ''),
    }),
  );
} else {
  // What the subgraph checks is named on the command line, never taken from a development default.
  const required: ('kid' | 'issuer' | 'audience')[] = values.jwks ? ['kid'] : ['kid', 'issuer', 'audience'];
  const missing = required.filter((name) => !values[name]).map((name) => `--${name}`);
  if (missing.length > 0) fail(`--key needs ${missing.join(', ').replace(/, ([^,]*)$/, ' and $1')} too`);
  let signing: ReturnType<typeof readPrivateKey>;
  try {
    signing = readPrivateKey(values.key);
  } catch (error) {
    if (error instanceof KeyFileError) fail(error.message);
    throw error;
  }
  const kid = values.kid!;
  console.log(
    values.jwks
      ? JSON.stringify(publicJwks(signing.key, signing.alg, kid), null, 2)
      : await signToken({ ...claims, issuer: values.issuer!, audience: values.audience! }, { ...signing, kid }),
  );
}
