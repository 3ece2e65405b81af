// `npm run token -- --scope "collections:read accounts:read" --accounts 0123456789,1234567890 [--expires 1h]`:
// prints a development token signed by the published development key (dev/), for a local subgraph
// started with AUTH_JWKS_URL=file:dev/auth-jwks.json. A production subgraph refuses this key.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEVELOPMENT_ISSUER } from '../src/auth/development-key.ts';
import { signDevelopmentToken } from './development-token.ts';

const USAGE = `usage: npm run token -- [--scope "collections:read accounts:read"] [--accounts 0123456789,1234567890]
       [--expires 1h] [--issuer ${DEVELOPMENT_ISSUER}] [--audience aud] [--subject developer]
Scopes: accounts:read, kyc:read, collections:read, collections:read:all, collections:review, collections:reconcile, merchant:auth,
transactions:authorize.
--expires takes seconds, or a number with s, m, h or d. The issuer and audience default to AUTH_ISSUER
and AUTH_AUDIENCE (from the environment or .env), else the development issuer and no audience.
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
  issuer: { type: 'string', default: process.env.AUTH_ISSUER || DEVELOPMENT_ISSUER },
  audience: { type: 'string', default: process.env.AUTH_AUDIENCE || '' },
  subject: { type: 'string', default: 'developer' },
  help: { type: 'boolean', default: false },
} as const;

function readArgs() {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
}
const values = readArgs();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const expires = /^(\d+)([smhd]?)$/.exec(values.expires);
if (!expires) fail(`--expires must be seconds or a number with s, m, h or d, got "${values.expires}"`);
const lifetimeS = Number(expires[1]) * UNITS[(expires[2] || 's') as keyof typeof UNITS];
const accounts = values.accounts
  .split(',')
  .map((account) => account.trim())
  .filter((account) => account !== '');
for (const account of accounts) if (!/^\d{10}$/.test(account)) fail(`--accounts: "${account}" is not a 10-digit account number`);

console.log(
  await signDevelopmentToken({
    scope: values.scope,
    accounts,
    lifetimeS,
    issuer: values.issuer,
    audience: values.audience,
    subject: values.subject,
  }),
);
