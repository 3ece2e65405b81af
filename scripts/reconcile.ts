// `npm run reconcile -- --file <path> [--column <name>] [--kind session|settlement] [--recover none|repush|import]
//   [--url http://localhost:4001] [--token <JWT>] [--out <report.csv>]`: checks the ids of a bank statement
// export against what the subgraph stored, with the bank (reconcileCollections), recovers what never
// arrived, and exits 0 only when every id is MATCHED or recovered.
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ExportError, readExportIds, type ColumnKind } from './reconcile/ids.ts';
import { reconciledClean, reportCsv, totalsTable } from './reconcile/report.ts';
import { reconcileIds } from './reconcile/run.ts';
import { readCommandLine } from './command-line.ts';

const USAGE = `usage: npm run reconcile -- --file <path> [--column <name>] [--kind session|settlement]
       [--recover none|repush|import] [--url http://localhost:4001] [--token <JWT>] [--out <report.csv>]
--file: a CSV (comma, semicolon or tab, as its header line uses) whose header names a settlementId or
  sessionId column, spelled any way (Settlement ID, SESSION_ID, settlement-id); where it has both, a row
  without a settlementId is checked by its sessionId. Or a plain list of ids, one a line (settlement ids
  unless --kind session).
--column: the column to read instead; --kind says what it holds where its name does not say.
--recover: what to do with each id the bank holds and the subgraph does not (MISSING_HERE): none (report
  it), repush (the bank sends it again through the webhook; waited for up to 10 s), import (store the bank's record).
--token: a token with scope collections:reconcile (or the TOKEN environment variable), where the subgraph checks tokens.
--out: one row per id (id, verdict, differences, recovered, error); a cell a spreadsheet would run as a formula starts with '.
Exits 0 when every id is MATCHED or recovered; 1 when any is not (MISSING_HERE and not recovered,
MISMATCHED, NOT_AT_BANK, UNKNOWN, failed) or a call failed part-way; 2 on a usage or file error.`;

function fail(message: string): never {
  console.error(`reconcile: ${message}`);
  process.exit(2);
}

if (existsSync('.env')) process.loadEnvFile('.env');
const options = {
  file: { type: 'string' },
  column: { type: 'string' },
  kind: { type: 'string' },
  recover: { type: 'string', default: 'none' },
  url: { type: 'string', default: `http://localhost:${process.env.PORT || 4001}` },
  token: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

const values = readCommandLine(options, USAGE, (message) => fail(`${message}\n${USAGE}`));
if (values.file === undefined) fail(`--file is required\n${USAGE}`);
const recover = values.recover.toUpperCase();
if (recover !== 'NONE' && recover !== 'REPUSH' && recover !== 'IMPORT')
  fail(`--recover must be none, repush or import, got "${values.recover}"`);
if (values.kind !== undefined && values.kind !== 'session' && values.kind !== 'settlement')
  fail(`--kind must be session or settlement, got "${values.kind}"`);
const kind: ColumnKind | undefined = values.kind;
let url: URL;
try {
  url = new URL(values.url);
} catch {
  fail(`--url must be an absolute URL, got "${values.url}"`);
}
if (url.pathname === '/' || url.pathname === '') url.pathname = '/graphql';
if (values.out !== undefined) {
  // Told now, not after a run of many batches.
  try {
    accessSync(dirname(resolve(values.out)), constants.W_OK);
  } catch {
    fail(`cannot write ${values.out}: its directory does not exist or is not writable`);
  }
}

let text: string;
try {
  text = readFileSync(values.file, 'utf8');
} catch (error) {
  fail(`cannot read ${values.file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
}
let exported;
try {
  exported = readExportIds(text, { file: values.file, column: values.column, kind });
} catch (error) {
  if (error instanceof ExportError) fail(error.message);
  throw error;
}

const { ids, columns } = exported;
const terminal = process.stderr.isTTY === true;
const sessions = ids.filter((one) => one.kind === 'sessionIds').length;
const counted = sessions === 0 ? 'settlement' : sessions === ids.length ? 'session' : `settlement and session`;
const from = columns.length === 0 ? '' : ` from column${columns.length > 1 ? 's' : ''} ${columns.join(', ')}`;
console.error(`Reconciling ${ids.length} ${counted} id(s)${from} of ${values.file} with ${url.href} (recover: ${recover.toLowerCase()})`);
const result = await reconcileIds(ids, {
  url,
  token: values.token ?? (process.env.TOKEN || undefined),
  recover,
  // On a terminal, one line rewritten in place; in a log, nothing per batch.
  onProgress: terminal ? (done) => process.stderr.write(`\rchecked ${done}/${ids.length}`) : undefined,
});
if (terminal && result.items.length > 0) process.stderr.write('\n');

console.log(totalsTable(result.totals));
if (values.out !== undefined) {
  try {
    writeFileSync(values.out, reportCsv(result.items));
  } catch (error) {
    fail(`cannot write ${values.out}: ${(error as Error).message}`);
  }
  console.log(`Per-id report written to ${values.out}`);
}
if (result.failure !== undefined) {
  console.error(`reconcile: stopped after ${result.items.length} of ${ids.length} id(s): ${result.failure}`);
}
process.exit(reconciledClean(result, ids.length) ? 0 : 1);
