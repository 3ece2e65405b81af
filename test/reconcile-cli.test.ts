import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { ExportError, readExportIds } from '../scripts/reconcile/ids.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { sandboxTransfer, tokenFor } from './helpers/reconciling.ts';
import { tempDirectory } from './helpers/stores.ts';
import { TEST_AUDIENCE, TEST_ISSUER, TestIssuer, writeJwksFile } from './helpers/tokens.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'reconcile.ts');

describe('reading a bank statement export', () => {
  const read = (text: string, options: { column?: string; kind?: 'session' | 'settlement' } = {}) =>
    readExportIds(text, { file: 'export.csv', ...options });
  const settlement = (id: string, line: number) => ({ kind: 'settlementIds', id, line });
  const session = (id: string, line: number) => ({ kind: 'sessionIds', id, line });

  it('reads with the one delimiter its header line uses: a ; inside a comma-separated narration is text', () => {
    const csv = 'Date,Narration,Settlement ID,Amount\n2026-11-01,Payment; order 5,STL-1,1500.00\n2026-11-01,"Rent, November",STL-2,10.00\n';
    expect(read(csv)).toEqual({ ids: [settlement('STL-1', 2), settlement('STL-2', 3)], columns: ['Settlement ID'] });
    const semicolons =
      '\uFEFFDate;Narration;"Settlement Id";Amount\n2026-11-01;Rent, November;"STL-1";"1,500.00"\n\n2026-11-02;x;STL-1;10,00\n';
    expect(read(semicolons)).toEqual({ ids: [settlement('STL-1', 2)], columns: ['Settlement Id'] });
    expect(read('Date\tsettlement_id\n2026-11-01\tSTL-3\n')).toEqual({ ids: [settlement('STL-3', 2)], columns: ['settlement_id'] });
  });

  it('matches column names as banks spell them: case, spaces, _ and - ignored', () => {
    for (const name of ['Settlement ID', 'SETTLEMENT_ID', 'settlement-id', 'settlementId', '"Settlement Id"']) {
      expect(read(`Amount,${name}\n1.00,T1\n`).ids).toEqual([settlement('T1', 2)]);
    }
    for (const name of ['Session ID', 'SESSION_ID', 'session-id', 'sessionId']) {
      expect(read(`${name},Amount\nS1,1.00\n`).ids).toEqual([session('S1', 2)]);
    }
    expect(read('session_id\nS1\n')).toEqual({ ids: [session('S1', 2)], columns: ['session_id'] });
  });

  it('checks a row without a settlementId by its sessionId where a file has both, and refuses a row with neither, naming its line', () => {
    const csv = 'Session ID,Settlement ID,Amount\nS1,T1,1.00\nS2,,2.00\nS1,T1,1.00\n';
    expect(read(csv)).toEqual({ ids: [settlement('T1', 2), session('S2', 3)], columns: ['Settlement ID', 'Session ID'] });
    expect(() => read(`${csv},,3.00\n`)).toThrow(new ExportError('export.csv line 5: has neither a Settlement ID nor a Session ID'));
    expect(() => read('settlementId,amount\nT1,1\n,2\n')).toThrow(new ExportError('export.csv line 3: has no settlementId'));
  });

  it('refuses a row with another number of fields, and an id a spreadsheet mangled, naming the line', () => {
    expect(() => read('Date,Narration,settlementId\n2026-11-01,Rent,T1\n2026-11-01,Rent, November,T2\n')).toThrow(
      new ExportError('export.csv line 3: 4 fields where its header has 3 (a "," inside a field that is not quoted?)'),
    );
    for (const mangled of ['1.23457E+19', '2.02611E+27', '1234567890.0', '20261122.']) {
      expect(() => read(`settlementId,amount\nT1,1\n${mangled},2\n`)).toThrow(
        new ExportError(
          `export.csv line 3: "${mangled}" is not an id but a number a spreadsheet made of one (an exponent or a decimal point): export the column as text`,
        ),
      );
    }
    expect(() => read('T1\n1.23457E+19\n')).toThrow(/^export\.csv line 2: "1\.23457E\+19" is not an id/);
    expect(() => read('T1\nT2 T3\n')).toThrow(
      new ExportError('export.csv line 2: holds more than one id ("T2 T3"), where each line is one id'),
    );
  });

  it('reads the column --column names, of the kind --kind says where its name does not', () => {
    const csv = 'Ref,NIP Session\nA,S9\n';
    expect(read(csv, { column: 'nip session' })).toEqual({ ids: [session('S9', 2)], columns: ['NIP Session'] });
    expect(read(csv, { column: 'REF', kind: 'settlement' })).toEqual({ ids: [settlement('A', 2)], columns: ['Ref'] });
    expect(() => read(csv, { column: 'ref' })).toThrow(
      new ExportError(
        'export.csv: the column "Ref" does not say whether it holds session or settlement ids: add --kind session or --kind settlement',
      ),
    );
    // A lone column named by --column is a header, not an id.
    expect(read('Reference\nA\n', { column: 'reference', kind: 'session' }).ids).toEqual([session('A', 2)]);
    // --kind alone picks that kind's column of a file that has both.
    expect(read('sessionId,settlementId\nS1,T1\n', { kind: 'session' }).ids).toEqual([session('S1', 2)]);
  });

  it('reads a plain list one id a line, as settlement ids unless --kind says session ids', () => {
    expect(read('T1\r\n T2 \n\nT1\n')).toEqual({ ids: [settlement('T1', 1), settlement('T2', 2)], columns: [] });
    expect(read('S1\n', { kind: 'session' }).ids).toEqual([session('S1', 1)]);
  });

  it('refuses an empty file, a CSV without a known column, an unknown or doubled column and an unclear delimiter, naming them', () => {
    expect(() => read('\n \n')).toThrow(new ExportError('export.csv holds no ids'));
    expect(() => read('date,amount\n1,2\n')).toThrow(
      new ExportError('export.csv has no sessionId or settlementId column (its columns: date, amount): name one with --column'),
    );
    expect(() => read('a,b\n1,2\n', { column: 'ref' })).toThrow(new ExportError('export.csv has no column "ref" (its columns: a, b)'));
    expect(() => read('Settlement Id,settlement_id\nA,B\n')).toThrow(
      new ExportError('export.csv has 2 settlementId columns (Settlement Id, settlement_id): name one with --column'),
    );
    expect(() => read('settlementId,date;amount\n')).toThrow(
      new ExportError('export.csv line 1: its header holds as many "," as ";", so which one separates its columns is unclear'),
    );
    expect(() => read('settlementId,amount\n')).toThrow(new ExportError('export.csv has no rows under its header'));
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

/** One id's line as the fake subgraph answers it: MATCHED unless told otherwise. */
interface FakeItem {
  verdict?: string | null;
  recovered?: boolean;
  error?: string | null;
}

/** An answer of reconcileCollections for these ids: each MATCHED, unless `lines` says otherwise. */
function report(ids: string[], lines: Record<string, FakeItem | string | null> = {}) {
  const items = ids.map((id) => {
    const given = lines[id];
    const line: FakeItem = given === undefined ? {} : typeof given === 'string' || given === null ? { verdict: given } : given;
    const verdict = line.verdict === undefined ? 'MATCHED' : line.verdict;
    return {
      id,
      verdict,
      differences: verdict === 'MISMATCHED' ? ['transactionAmount'] : [],
      recovered: line.recovered ?? false,
      error: line.error ?? (verdict === null ? 'UPSTREAM_UNAVAILABLE: the bank did not answer' : null),
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
    recovered: items.filter((item) => item.recovered).length,
    failed: count(null),
    items,
  };
}

/** A stand-in subgraph answering reconcileCollections with `lines` for the ids it is sent; it records each call's variables. */
async function fakeSubgraph(lines: Record<string, FakeItem | string | null> = {}) {
  const calls: { sessionIds?: string[]; settlementIds?: string[]; recover: string }[] = [];
  const subgraph = await startFakeBank((request, reply) => {
    const { variables } = JSON.parse(request.body) as { variables: (typeof calls)[number] };
    calls.push(variables);
    reply.json({ data: { reconcileCollections: report(variables.sessionIds ?? variables.settlementIds ?? [], lines) } });
  });
  return { url: subgraph.url, calls };
}

/** Writes `text` to a file of a fresh directory; its path, and the path of a report beside it. */
function exportFile(text: string, name = 'statement.csv'): { file: string; out: string } {
  const directory = tempDirectory();
  const file = join(directory, name);
  writeFileSync(file, text);
  return { file, out: join(directory, 'report.csv') };
}

const reportLines = (out: string) => readFileSync(out, 'utf8').trim().split('\n');

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
    const { file, out } = exportFile(`settlementId,amount\n${Array.from({ length: 60 }, (_, i) => `T-${i},1.00`).join('\n')}\n`);

    const { code, stdout, stderr } = await runCli(['--file', file, '--recover', 'repush', '--url', subgraph.url, '--out', out], {
      TOKEN: 'tok-1',
    });

    expect(stderr).toContain('Reconciling 60 settlement id(s) from column settlementId');
    expect(batches.map((batch) => batch.length)).toEqual([25, 25, 10]);
    expect(stdout).toMatch(/\| checked +\| 60 +\|/);
    expect(stdout).toMatch(/\| mismatched +\| 1 +\|/);
    expect(stdout).toMatch(/\| failed +\| 1 +\|/);
    const lines = reportLines(out);
    expect(lines[0]).toBe('id,verdict,differences,recovered,error');
    expect(lines).toContain('T-7,MISMATCHED,transactionAmount,no,');
    expect(lines).toContain('T-40,,,no,UPSTREAM_UNAVAILABLE: the bank did not answer');
    expect(lines).toHaveLength(61);
    expect(code).toBe(1);
  });

  it('exits 0 only when every id is MATCHED or recovered, and 1 for one missing, unknown or not at the bank, with --recover none too', async () => {
    const subgraph = await fakeSubgraph({
      'T-lost': 'MISSING_HERE',
      'T-back': { verdict: 'MISSING_HERE', recovered: true },
      'T-stranger': 'UNKNOWN',
      'T-forged': 'NOT_AT_BANK',
      'T-queued': { verdict: 'MISSING_HERE', error: 'UPSTREAM_UNAVAILABLE: the bank queued it to be sent again, but it has not arrived' },
    });
    const exit = async (ids: string[], recover = 'none') =>
      (await runCli(['--file', exportFile(`${ids.join('\n')}\n`, 'ids.txt').file, '--recover', recover, '--url', subgraph.url])).code;
    expect(await exit(['T-1', 'T-2'])).toBe(0);
    expect(await exit(['T-1', 'T-back'], 'repush')).toBe(0);
    for (const [id, recover] of [
      ['T-lost', 'none'],
      ['T-queued', 'repush'],
      ['T-stranger', 'none'],
      ['T-forged', 'import'],
    ]) {
      expect({ id, code: await exit(['T-1', id!], recover) }).toEqual({ id, code: 1 });
    }
  });

  it('exits 2 with one line naming the problem for a bad file, line, column, option or --out', async () => {
    const subgraph = await fakeSubgraph();
    const cli = async (text: string, ...args: string[]) => {
      const { file } = exportFile(text);
      const { code, stderr } = await runCli(['--file', file, '--url', subgraph.url, ...args]);
      return { code, stderr: stderr.replaceAll(file, '<file>') };
    };
    expect(await cli('settlementId,amount\nT1,1\n1.23457E+19,2\n')).toEqual({
      code: 2,
      stderr:
        'reconcile: <file> line 3: "1.23457E+19" is not an id but a number a spreadsheet made of one (an exponent or a decimal point): export the column as text\n',
    });
    expect(await cli('Narration,settlementId\nRent, November,T1\n')).toEqual({
      code: 2,
      stderr: 'reconcile: <file> line 2: 3 fields where its header has 2 (a "," inside a field that is not quoted?)\n',
    });
    expect(await cli('Settlement ID,Session ID\nT1,S1\n,\n')).toEqual({
      code: 2,
      stderr: 'reconcile: <file> line 3: has neither a Settlement ID nor a Session ID\n',
    });
    expect(await cli('a,b\n1,2\n', '--column', 'ref')).toEqual({
      code: 2,
      stderr: 'reconcile: <file> has no column "ref" (its columns: a, b)\n',
    });
    expect(await cli('T1\n', '--recover', 'all')).toEqual({
      code: 2,
      stderr: 'reconcile: --recover must be none, repush or import, got "all"\n',
    });
    expect(await cli('T1\n', '--kind', 'nip')).toEqual({ code: 2, stderr: 'reconcile: --kind must be session or settlement, got "nip"\n' });
    expect(await cli('T1\n', '--out', '/nonexistent-directory/report.csv')).toEqual({
      code: 2,
      stderr: 'reconcile: cannot write /nonexistent-directory/report.csv: its directory does not exist or is not writable\n',
    });
    const missing = await runCli(['--file', join(tempDirectory(), 'nope.csv')]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/^reconcile: cannot read .*nope\.csv: no such file\n$/) });
    expect(subgraph.calls).toEqual([]);
  });

  it('sends settlement ids and session ids each in calls of their own, and writes the report in the order of the file', async () => {
    const subgraph = await fakeSubgraph({ S2: 'MISSING_HERE' });
    const { file, out } = exportFile('Session ID,Settlement ID,Narration\nS1,T1,Rent; November\nS2,,School fees\nS3,T3,x\n');
    const { code, stderr } = await runCli(['--file', file, '--url', subgraph.url, '--out', out]);
    expect(stderr).toContain('Reconciling 3 settlement and session id(s) from columns Settlement ID, Session ID');
    expect(subgraph.calls).toEqual([
      { settlementIds: ['T1', 'T3'], recover: 'NONE' },
      { sessionIds: ['S2'], recover: 'NONE' },
    ]);
    expect(reportLines(out)).toEqual([
      'id,verdict,differences,recovered,error',
      'T1,MATCHED,,no,',
      'S2,MISSING_HERE,,no,',
      'T3,MATCHED,,no,',
    ]);
    expect(code).toBe(1);
  });

  it('prints the totals and writes the report of the ids done when a call fails part-way, then exits 1 naming the failure', async () => {
    let calls = 0;
    const subgraph = await startFakeBank((request, reply) => {
      calls += 1;
      if (calls > 1) return reply.destroy();
      const { variables } = JSON.parse(request.body) as { variables: { settlementIds: string[] } };
      reply.json({ data: { reconcileCollections: report(variables.settlementIds) } });
    });
    const ids = Array.from({ length: 250 }, (_, i) => `T-${i}`);
    const { file, out } = exportFile(`settlementId\n${ids.join('\n')}\n`);
    const { code, stdout, stderr } = await runCli(['--file', file, '--url', subgraph.url, '--out', out]);
    expect(stdout).toMatch(/\| checked +\| 200 +\|/);
    expect(stdout).toMatch(/\| matched +\| 200 +\|/);
    expect(reportLines(out)).toHaveLength(201);
    expect(stderr.trim().split('\n').at(-1)).toMatch(
      /^reconcile: stopped after 200 of 250 id\(s\): could not reach http:\/\/127\.0\.0\.1:\d+\/graphql: /,
    );
    expect(code).toBe(1);

    // Refused from the first call: nothing done, said, and 1.
    const refusing = await startFakeBank((_, reply) =>
      reply.json({
        data: { reconcileCollections: null },
        errors: [{ message: 'A token is required.', extensions: { code: 'UNAUTHENTICATED' } }],
      }),
    );
    const refused = await runCli(['--file', file, '--url', refusing.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n').at(-1)).toBe(
      'reconcile: stopped after 0 of 250 id(s): the subgraph refused the call: UNAUTHENTICATED: A token is required.',
    );
  });

  it('writes a cell a spreadsheet would run as a formula after a leading quote', async () => {
    const dangerous = ['=HYPERLINK("http://x")', '+SUM(A1)', '-2+3', '@cmd', '\tT-tab'];
    const subgraph = await fakeSubgraph({ 'T-1': { verdict: null, error: '=1+1' } });
    const { file, out } = exportFile(`settlementId\nT-1\n${dangerous.map((id) => `"${id.replaceAll('"', '""')}"`).join('\n')}\n`);
    await runCli(['--file', file, '--url', subgraph.url, '--out', out]);
    const rows = parse(readFileSync(out, 'utf8'));
    expect(rows.map((row) => [row[0], row[4]])).toEqual([['id', 'error'], ['T-1', "'=1+1"], ...dangerous.map((id) => [`'${id}`, ''])]);
  });
});

describe('npm run reconcile against the subgraph', () => {
  async function startOperatedApp(env: Record<string, string> = {}) {
    const issuer = await TestIssuer.create();
    const auth = { AUTH_JWKS_URL: writeJwksFile(issuer), AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE };
    const app = await startApp({ ...auth, ...env });
    const token = (await tokenFor(issuer, 'collections:reconcile')).authorization!.slice('Bearer '.length);
    return { app, issuer, token };
  }

  it("reconciles a CSV export end to end: imports what never arrived, writes each id's line, and exits 1 for a forged one", async () => {
    // A budget of two bank calls: the CLI learns it from the first refusal and sends two ids, then one.
    const { app, issuer, token } = await startOperatedApp({ MAX_OPERATION_COST: '2' });
    const matched = await sandboxTransfer(app, { amount: '2500.00' });
    const lost = await sandboxTransfer(app, { amount: '99999999999999.99', lost: true });
    const forged = notificationBody();
    expect((await app.deliver(forged)).reply.responseCode).toBe('00');
    const { file, out } = exportFile(
      `Transaction Date,Reference,Settlement ID,Amount\n2026-11-22,A,${matched.settlementId},2500.00\n2026-11-22,B,${lost.settlementId},99999999999999.99\n2026-11-22,C,${forged.settlementId},1500.00\n`,
    );

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

    expect(stderr).toContain('Reconciling 3 settlement id(s) from column Settlement ID');
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
    expect(reportLines(out)).toEqual([
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

  it('exits 1 for a lost transfer left missing (--recover none), and 0 once a repush of it is stored, by its session id', async () => {
    const { app, token } = await startOperatedApp();
    const delivered = await sandboxTransfer(app, { amount: '2500.00' });
    const lost = await sandboxTransfer(app, { amount: '1500.00', lost: true });
    // A statement export of session ids only, under a name of the bank's own.
    const { file, out } = exportFile(`NIP Session,Amount\n${delivered.sessionId},2500.00\n${lost.sessionId},1500.00\n`);
    const args = ['--file', file, '--column', 'NIP Session', '--url', app.baseUrl, '--token', token, '--out', out];

    const left = await runCli([...args, '--recover', 'none']);
    expect(left.stdout).toMatch(/\| missingHere +\| 1 +\|/);
    expect(left.code).toBe(1);

    const repushed = await runCli([...args, '--recover', 'repush']);
    expect(reportLines(out)).toEqual([
      'id,verdict,differences,recovered,error',
      `${delivered.sessionId},MATCHED,,no,`,
      `${lost.sessionId},MISSING_HERE,,yes,`,
    ]);
    expect(repushed.code).toBe(0);
  });
});
