import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExportError, readExportIds } from '../scripts/reconcile/ids.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { sandboxTransfer, tokenFor } from './helpers/reconciling.ts';
import { tempDirectory } from './helpers/stores.ts';
import { TEST_AUDIENCE, TEST_ISSUER, TestIssuer, writeJwksFile } from './helpers/tokens.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'reconcile.ts');

describe('reading a bank statement export', () => {
  it('reads the settlementId column of a CSV, whatever its delimiter, quotes and BOM', () => {
    const csv =
      '\uFEFFDate;"Settlement Id";settlement_id;Amount\n2026-11-01;x;"STL-1";"1,500.00"\n2026-11-01;y;STL-2;10.00\n\n2026-11-02;z;STL-1;10.00\n';
    expect(readExportIds(csv, { file: 'export.csv' })).toEqual({ kind: 'settlementIds', column: 'settlement_id', ids: ['STL-1', 'STL-2'] });
  });

  it('prefers a settlement id column to a session id column, and reads session ids when they are all there is', () => {
    expect(readExportIds('sessionId,settlementId\nS1,T1\n', { file: 'f' })).toMatchObject({ kind: 'settlementIds', ids: ['T1'] });
    expect(readExportIds('SessionID,amount\nS1,1\nS2,2\n', { file: 'f' })).toMatchObject({ kind: 'sessionIds', ids: ['S1', 'S2'] });
    expect(readExportIds('session_id\nS1\n', { file: 'f' })).toMatchObject({ kind: 'sessionIds', column: 'session_id', ids: ['S1'] });
  });

  it('reads the column --column names, as a session id when its name says so', () => {
    const csv = 'Ref,NIP Session\nA,S9\n';
    expect(readExportIds(csv, { file: 'f', column: 'nip session' })).toEqual({ kind: 'sessionIds', column: 'NIP Session', ids: ['S9'] });
    expect(readExportIds(csv, { file: 'f', column: 'ref' })).toEqual({ kind: 'settlementIds', column: 'Ref', ids: ['A'] });
  });

  it('reads a plain list one id a line, as settlement ids unless --column says session ids', () => {
    expect(readExportIds('T1\r\n T2 \n\nT1\n', { file: 'f' })).toEqual({ kind: 'settlementIds', column: undefined, ids: ['T1', 'T2'] });
    expect(readExportIds('S1\n', { file: 'f', column: 'sessionId' })).toMatchObject({ kind: 'sessionIds', ids: ['S1'] });
  });

  it('refuses an empty file, a CSV without a known column, and an unknown --column, naming the file and the column', () => {
    expect(() => readExportIds('\n \n', { file: 'empty.csv' })).toThrow(new ExportError('empty.csv holds no ids'));
    expect(() => readExportIds('date,amount\n1,2\n', { file: 'x.csv' })).toThrow(
      /x\.csv has no sessionId, session_id, settlementId or settlement_id column \(its columns: date, amount\): name one with --column/,
    );
    expect(() => readExportIds('a,b\n1,2\n', { file: 'x.csv', column: 'ref' })).toThrow('x.csv has no column "ref" (its columns: a, b)');
    expect(() => readExportIds('settlementId,amount\n,1\n', { file: 'x.csv' })).toThrow('x.csv has no ids in its settlementId column');
  });
});

/** Runs the CLI to its end: its exit code and what it printed. */
function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SCRIPT, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: tempDirectory(),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** An answer of reconcileCollections for these ids: each MATCHED, unless `verdicts` says otherwise. */
function report(ids: string[], verdicts: Record<string, string | null> = {}) {
  const items = ids.map((id) => {
    const verdict = id in verdicts ? verdicts[id]! : 'MATCHED';
    return {
      id,
      verdict,
      differences: verdict === 'MISMATCHED' ? ['transactionAmount'] : [],
      recovered: false,
      error: verdict === null ? 'UPSTREAM_UNAVAILABLE: the bank did not answer' : null,
    };
  });
  const count = (verdict: string | null) => items.filter((item) => item.verdict === verdict).length;
  return {
    checked: ids.length,
    matched: count('MATCHED'),
    missingHere: count('MISSING_HERE'),
    mismatched: count('MISMATCHED'),
    notAtBank: count('NOT_AT_BANK'),
    unknown: count('UNKNOWN'),
    recovered: 0,
    failed: count(null),
    items,
  };
}

describe('npm run reconcile', () => {
  it('sends the ids in batches the budget allows, prints the totals, writes the report and exits 1 on a mismatch or failure', async () => {
    const batches: string[][] = [];
    const subgraph = await startFakeBank((request, reply) => {
      const { variables } = JSON.parse(request.body) as { variables: { settlementIds: string[]; recover: string } };
      expect(request.headers.authorization).toBe('Bearer tok-1');
      expect(variables.recover).toBe('REPUSH');
      // The default MAX_OPERATION_COST, 25, at one bank call an id, as the subgraph prices it.
      const estimated = variables.settlementIds.length;
      if (estimated > 25)
        return reply.json({
          errors: [{ message: 'too expensive', extensions: { code: 'COST_ESTIMATED_TOO_EXPENSIVE', cost: { estimated, max: 25 } } }],
        });
      batches.push(variables.settlementIds);
      reply.json({ data: { reconcileCollections: report(variables.settlementIds, { 'T-7': 'MISMATCHED', 'T-40': null }) } });
    });
    const directory = tempDirectory();
    const file = join(directory, 'statement.csv');
    writeFileSync(file, `settlementId,amount\n${Array.from({ length: 60 }, (_, i) => `T-${i},1.00`).join('\n')}\n`);
    const out = join(directory, 'report.csv');

    const { code, stdout, stderr } = await runCli(['--file', file, '--recover', 'repush', '--url', subgraph.url, '--out', out], {
      TOKEN: 'tok-1',
    });

    expect(stderr).toContain('Reconciling 60 settlement id(s) from column settlementId');
    expect(batches.map((batch) => batch.length)).toEqual([25, 25, 10]);
    expect(stdout).toMatch(/\| checked +\| 60 +\|/);
    expect(stdout).toMatch(/\| mismatched +\| 1 +\|/);
    expect(stdout).toMatch(/\| failed +\| 1 +\|/);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('id,verdict,differences,recovered,error');
    expect(lines).toContain('T-7,MISMATCHED,transactionAmount,no,');
    expect(lines).toContain('T-40,,,no,UPSTREAM_UNAVAILABLE: the bank did not answer');
    expect(lines).toHaveLength(61);
    expect(code).toBe(1);
  });

  it('exits 0 when every id matched, and 2 with one line naming the problem for a bad file, column or refusal', async () => {
    const subgraph = await startFakeBank((request, reply) => {
      const { variables } = JSON.parse(request.body) as { variables: { sessionIds?: string[] } };
      if (request.headers.authorization === undefined)
        return reply.json({
          data: { reconcileCollections: null },
          errors: [{ message: 'A token is required.', extensions: { code: 'UNAUTHENTICATED' } }],
        });
      reply.json({ data: { reconcileCollections: report(variables.sessionIds ?? []) } });
    });
    const file = join(tempDirectory(), 'ids.txt');
    writeFileSync(file, 'S-1\nS-2\n');

    expect(await runCli(['--file', file, '--column', 'sessionId', '--url', subgraph.url, '--token', 't'])).toMatchObject({ code: 0 });
    const refused = await runCli(['--file', file, '--url', subgraph.url]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n').at(-1)).toBe(
      'reconcile: the subgraph refused the call: UNAUTHENTICATED: A token is required.',
    );
    const missing = await runCli(['--file', join(tempDirectory(), 'nope.csv')]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/^reconcile: cannot read .*nope\.csv: no such file\n$/) });
    const csv = join(tempDirectory(), 'x.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    expect((await runCli(['--file', csv, '--column', 'ref'])).stderr).toBe(`reconcile: ${csv} has no column "ref" (its columns: a, b)\n`);
    expect((await runCli(['--file', csv, '--recover', 'all'])).stderr).toBe(
      'reconcile: --recover must be none, repush or import, got "all"\n',
    );
  });
});

describe('npm run reconcile against the subgraph', () => {
  it("reconciles a CSV export end to end: imports what never arrived, writes each id's line, and exits 1 for a forged one", async () => {
    const issuer = await TestIssuer.create();
    const auth = { AUTH_JWKS_URL: writeJwksFile(issuer), AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE };
    // A budget of two bank calls: the CLI learns it from the first refusal and sends two ids, then one.
    const app = await startApp({ ...auth, MAX_OPERATION_COST: '2' });
    const matched = await sandboxTransfer(app, { amount: '2500.00' });
    const lost = await sandboxTransfer(app, { amount: '99999999999999.99', lost: true });
    const forged = notificationBody();
    expect((await app.deliver(forged)).reply.responseCode).toBe('00');
    const directory = tempDirectory();
    const file = join(directory, 'statement.csv');
    writeFileSync(
      file,
      `Transaction Date,Reference,settlement_id,Amount\n2026-11-22,A,${matched.settlementId},2500.00\n2026-11-22,B,${lost.settlementId},99999999999999.99\n2026-11-22,C,${forged.settlementId},1500.00\n`,
    );
    const out = join(directory, 'report.csv');
    const token = (await tokenFor(issuer, 'collections:reconcile')).authorization!.slice('Bearer '.length);

    const { code, stdout, stderr } = await runCli([
      '--file',
      file,
      '--recover',
      'import',
      '--url',
      app.baseUrl,
      '--out',
      out,
      '--token',
      token,
    ]);

    expect(stderr).toContain('Reconciling 3 settlement id(s) from column settlement_id');
    for (const [total, count] of [
      ['checked', 3],
      ['matched', 1],
      ['missingHere', 1],
      ['notAtBank', 1],
      ['recovered', 1],
      ['failed', 0],
    ] as const) {
      expect(stdout).toMatch(new RegExp(`\\| ${total} +\\| ${count} +\\|`));
    }
    expect(readFileSync(out, 'utf8').trim().split('\n')).toEqual([
      'id,verdict,differences,recovered,error',
      `${matched.settlementId},MATCHED,,no,`,
      `${lost.settlementId},MISSING_HERE,,yes,`,
      `${forged.settlementId},NOT_AT_BANK,,no,`,
    ]);
    expect(code).toBe(1);
    const reader = await tokenFor(issuer, 'collections:read:all');
    const stored = await app.query(
      'query ($id: ID!) { collectionNotification(settlementId: $id) { transactionAmount source } }',
      { id: lost.settlementId },
      reader,
    );
    expect(stored.data!.collectionNotification).toEqual({ transactionAmount: '99999999999999.99', source: 'RECONCILED' });

    // Once recovered, the export minus the forged one reconciles clean.
    writeFileSync(file, `settlementId\n${matched.settlementId}\n${lost.settlementId}\n`);
    expect(await runCli(['--file', file, '--url', app.baseUrl, '--token', token])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/\| matched +\| 2 +\|/),
    });
  });
});
