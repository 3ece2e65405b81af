// `npm run reconcile -- --file <path> [--column <name>] [--recover none|repush|import] [--url http://localhost:4001]
//   [--token <JWT>] [--out <report.csv>]`: checks the ids of a bank statement export against what the
// subgraph stored, with the bank (reconcileCollections), recovers what never arrived, and exits non-zero
// when any id is MISMATCHED, NOT_AT_BANK or could not be checked.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ExportError, readExportIds } from './reconcile/ids.ts';
import { needsAttention, reportCsv, totalsTable } from './reconcile/report.ts';
import { ReconcileCallError, reconcileIds } from './reconcile/run.ts';

const USAGE = `usage: npm run reconcile -- --file <path> [--column <name>] [--recover none|repush|import]
       [--url http://localhost:4001] [--token <JWT>] [--out <report.csv>]
--file: a CSV whose header names a sessionId, session_id, settlementId or settlement_id column (or the
  column --column names), or a plain list of ids, one a line (settlement ids; session ids with --column sessionId).
--recover: what to do with each id the bank holds and the subgraph does not (MISSING_HERE): none (report
  it), repush (the bank sends it again through the webhook), import (store the bank's record).
--token: a token with scope collections:reconcile (or the TOKEN environment variable), where the subgraph checks tokens.
Exits 0 when every id matched or was recovered, 1 when any is MISMATCHED, NOT_AT_BANK or failed, 2 on a usage or file error.`;

function fail(message: string): never {
  console.error(`reconcile: ${message}`);
  process.exit(2);
}

if (existsSync('.env')) process.loadEnvFile('.env');
const options = {
  file: { type: 'string' },
  column: { type: 'string' },
  recover: { type: 'string', default: 'none' },
  url: { type: 'string', default: `http://localhost:${process.env.PORT || 4001}` },
  token: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

function readArgs() {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    return fail(`${(error as Error).message}\n${USAGE}`);
  }
}
const values = readArgs();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.file === undefined) fail(`--file is required\n${USAGE}`);
const recover = values.recover.toUpperCase();
if (recover !== 'NONE' && recover !== 'REPUSH' && recover !== 'IMPORT')
  fail(`--recover must be none, repush or import, got "${values.recover}"`);
let url: URL;
try {
  url = new URL(values.url);
} catch {
  fail(`--url must be an absolute URL, got "${values.url}"`);
}
if (url.pathname === '/' || url.pathname === '') url.pathname = '/graphql';

let text: string;
try {
  text = readFileSync(values.file, 'utf8');
} catch (error) {
  fail(`cannot read ${values.file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
}
let exported;
try {
  exported = readExportIds(text, { file: values.file, column: values.column });
} catch (error) {
  if (error instanceof ExportError) fail(error.message);
  throw error;
}

const { ids, kind, column } = exported;
const terminal = process.stderr.isTTY === true;
console.error(
  `Reconciling ${ids.length} ${kind === 'sessionIds' ? 'session' : 'settlement'} id(s)${column ? ` from column ${column}` : ''} of ${values.file} with ${url.href} (recover: ${recover.toLowerCase()})`,
);
let result;
try {
  result = await reconcileIds(ids, {
    url,
    token: values.token ?? (process.env.TOKEN || undefined),
    kind,
    recover: recover,
    // On a terminal, one line rewritten in place; in a log, nothing per batch.
    onProgress: terminal ? (done) => process.stderr.write(`\rchecked ${done}/${ids.length}`) : undefined,
  });
} catch (error) {
  if (terminal) process.stderr.write('\n');
  if (error instanceof ReconcileCallError) fail(error.message);
  throw error;
}
if (terminal) process.stderr.write('\n');

console.log(totalsTable(result.totals));
if (values.out !== undefined) {
  writeFileSync(values.out, reportCsv(result.items));
  console.log(`Per-id report written to ${values.out}`);
}
process.exit(needsAttention(result.totals) ? 1 : 0);
