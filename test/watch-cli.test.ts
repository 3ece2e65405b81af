import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { startConfirmingApp, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { tempDirectory, tempSqlitePath } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { TEST_ISSUER, TestIssuer, writeJwksFile } from './helpers/tokens.ts';
import { expire, Inbox } from './helpers/wait.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'watch.ts');
const OWN = '0123456789';

interface Watcher {
  /** Each line of stdout: one per transfer. */
  events: Inbox<string>;
  /** Each line of stderr: what happens to the connection, and refusals. */
  notes: Inbox<string>;
  exited: Promise<number | null>;
  signal(signal: NodeJS.Signals): void;
}

/** Runs `npm run watch -- <args>` (the script itself, with the test's Node) in an empty directory; killed after the test. */
function startWatcher(args: string[]): Watcher {
  const child = spawn(process.execPath, [SCRIPT, ...args], {
    cwd: tempDirectory(),
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const events = new Inbox<string>();
  const notes = new Inbox<string>();
  createInterface({ input: child.stdout }).on('line', (line) => events.push(line));
  createInterface({ input: child.stderr }).on('line', (line) => notes.push(line));
  return { events, notes, exited, signal: (signal) => child.kill(signal) };
}

/** The settlementId of a human line: its fourth column. */
const settlementIdOf = (line: string) => line.split(/\s{2,}/)[3];
const cursorOf = (line: string) => line.split(/\s{2,}/).at(-1);

/** Delivers a transfer to OWN through the webhook and resolves to its settlementId. */
async function deliver(app: TestApp): Promise<string> {
  const body = notificationBody({ accountNumber: OWN });
  expect((await app.deliver(body)).reply.responseCode).toBe('00');
  return body.settlementId;
}

describe('npm run watch', () => {
  it('prints every transfer once, in order, across a restart of the subgraph under it, saying it lost the connection and where it resumed', async () => {
    const storeUrl = `sqlite:${tempSqlitePath()}`;
    const first = await startApp({ STORE_URL: storeUrl });
    const port = new URL(first.baseUrl).port;
    // Between the watcher and the subgraph: while it is cut, the watcher cannot come back, so what
    // is posted to the restarted subgraph meanwhile arrives during the outage, whatever the timing.
    const link = await startTcpProxy(first.baseUrl);
    const watcher = startWatcher(['--url', link.url]);
    await watcher.notes.first((line) => line.startsWith('Ready: watching incomingTransfer at ws://127.0.0.1:'));
    await subscribersLive(first, 1);

    const before = [await deliver(first), await deliver(first)];
    await watcher.events.atLeast(2);
    const lastBefore = cursorOf(watcher.events[1]!);

    // Killed under it: the drain closes the watcher's socket with 1001.
    await first.app.close();
    link.cut();
    await watcher.notes.first((line) => line.startsWith('Connection lost (1001'));
    const second = await startApp({ STORE_URL: storeUrl, PORT: port });
    const during = [await deliver(second), await deliver(second)];
    link.restore();

    await watcher.notes.first((line) => line === `Reconnected: resuming after ${lastBefore}`, 20_000);
    await watcher.events.atLeast(4);
    await subscribersLive(second, 1);
    const after = [await deliver(second)];
    await watcher.events.atLeast(5);

    expect(watcher.events.map(settlementIdOf)).toEqual([...before, ...during, ...after]);
    // time, account, amount, settlementId, confirmation status, cursor
    expect(watcher.events[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+|-)\d\d:\d\d {2}0123456789 {2}\s*NGN 1,500\.00 {2}\S+ {2}(PENDING|NOT_AT_BANK)\s* {2}\S+$/,
    );

    watcher.signal('SIGINT');
    expect(await watcher.exited).toBe(0);
  }, 60_000);

  it('exits 0 on Ctrl-C through npm run watch (SIGINT to its whole process group, as a terminal sends it)', async () => {
    const app = await startApp();
    // Its own process group, as a terminal's foreground job; npm told not to look for its own updates.
    const child = spawn('npm', ['run', '-s', 'watch', '--', '--url', app.baseUrl], {
      cwd: join(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH, npm_config_update_notifier: 'false' },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    onCleanup(async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      await exited;
    });
    const notes = new Inbox<string>();
    createInterface({ input: child.stderr }).on('line', (line) => notes.push(line));
    await notes.first((line) => line.startsWith('Ready: watching incomingTransfer'), 15_000);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
  });

  it('--json prints each transfer as one JSON line, amounts as exact decimal text', async () => {
    const app = await startApp();
    const watcher = startWatcher(['--url', app.baseUrl, '--json', '--account', OWN]);
    await subscribersLive(app, 1);
    const settlementId = await deliver(app);
    const [line] = await watcher.events.atLeast(1);
    expect(JSON.parse(line!)).toMatchObject({
      settlementId,
      accountNumber: OWN,
      transactionAmount: '1500.00',
      cursor: expect.any(String),
      confirmation: { status: expect.any(String) },
    });
    watcher.signal('SIGINT');
    expect(await watcher.exited).toBe(0);
  });

  it('--confirmed watches the confirmed stream, printing a transfer once the bank has confirmed it', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const watcher = startWatcher(['--url', app.baseUrl, '--confirmed']);
    await watcher.notes.first((line) => line.includes('(confirmed only)'));
    await subscribersLive(app, 1);
    const body = notificationBody({ accountNumber: OWN });
    bank.know(transferOf(body));
    await app.deliver(body);
    const [line] = await watcher.events.atLeast(1);
    expect(settlementIdOf(line!)).toBe(body.settlementId);
    expect(line).toContain('  CONFIRMED  ');
  });

  it('--after replays what arrived after that cursor first', async () => {
    const app = await startApp();
    const ids = [await deliver(app), await deliver(app), await deliver(app)];
    const { data } = await app.query(`{ collectionNotification(settlementId: "${ids[0]}") { cursor } }`);
    const watcher = startWatcher(['--url', app.baseUrl, '--after', data!.collectionNotification.cursor]);
    await watcher.events.atLeast(2);
    expect(watcher.events.map(settlementIdOf)).toEqual(ids.slice(1));
  });
});

describe('npm run watch refused', () => {
  async function guardedApp() {
    const issuer = await TestIssuer.create();
    const app = await startApp({ AUTH_JWKS_URL: writeJwksFile(issuer), AUTH_ISSUER: TEST_ISSUER });
    return { app, issuer };
  }

  /** The watcher's refusal: its exit code and the one line it ends with. */
  async function refusalOf(watcher: Watcher): Promise<{ code: number | null; refusals: string[] }> {
    const code = await expire(watcher.exited, 'the watcher to exit');
    return { code, refusals: watcher.notes.filter((line) => line.startsWith('watch:')) };
  }

  it('says in one line that a token is needed when none is given', async () => {
    const { app } = await guardedApp();
    expect(await refusalOf(startWatcher(['--url', app.baseUrl]))).toEqual({
      code: 1,
      refusals: [
        'watch: refused (UNAUTHENTICATED): this subgraph checks tokens and none was given: pass --token <JWT> with scope collections:read',
      ],
    });
  });

  it('says in one line that the token given is not accepted', async () => {
    const { app, issuer } = await guardedApp();
    const { code, refusals } = await refusalOf(
      startWatcher(['--url', app.baseUrl, '--token', await issuer.signWithUnknownKey({ scope: 'collections:read' })]),
    );
    expect(code).toBe(1);
    expect(refusals).toEqual([
      expect.stringMatching(/^watch: refused \(UNAUTHENTICATED\): the token given with --token was not accepted: .*signature/),
    ]);
  });

  it('says in one line which scope the token lacks', async () => {
    const { app, issuer } = await guardedApp();
    const token = await issuer.sign({ scope: 'accounts:read', accounts: [OWN] });
    const { code, refusals } = await refusalOf(startWatcher(['--url', app.baseUrl, '--token', token]));
    expect(code).toBe(1);
    expect(refusals).toEqual([
      'watch: refused (UNAUTHORIZED_FIELD_OR_TYPE): the token lacks scope collections:read (or collections:read:all), which watching needs',
    ]);
  });

  it("says in one line that the account is not among the token's", async () => {
    const { app, issuer } = await guardedApp();
    const token = await issuer.sign({ scope: 'collections:read', accounts: ['1234567890'] });
    const { code, refusals } = await refusalOf(startWatcher(['--url', app.baseUrl, '--token', token, '--account', OWN]));
    expect(code).toBe(1);
    expect(refusals).toEqual([
      "watch: refused (FORBIDDEN): account 0123456789 is not among the token's accounts: use a token naming it, or leave --account out",
    ]);
  });

  it('sends the token as connectionParams.Authorization, and says in one line when it ends (4401) how to resume', async () => {
    const { app, issuer } = await guardedApp();
    // Expired 28 s ago, within the 30 s of clock skew: accepted now, ended by the subgraph (4401) in about 2 s.
    const token = await issuer.sign({ scope: 'collections:read', accounts: [OWN], expiresIn: -28 });
    const watcher = startWatcher(['--url', app.baseUrl, '--token', token]);
    await subscribersLive(app, 1);
    const settlementId = await deliver(app);
    await watcher.events.atLeast(1);
    expect(settlementIdOf(watcher.events[0]!)).toBe(settlementId);
    const { code, refusals } = await refusalOf(watcher);
    expect(code).toBe(1);
    // The line ends with the cursor to resume after: the last one printed.
    expect(refusals).toEqual([
      expect.stringMatching(/^watch: closed by the subgraph \(4401 .*\): the token has ended .*resume with --after \S+$/),
    ]);
    expect(refusals[0]!.endsWith(` --after ${cursorOf(watcher.events[0]!)}`)).toBe(true);
  });

  it('says in one line that a cursor is not one of the stream it asks for (BAD_USER_INPUT naming after)', async () => {
    const app = await startApp();
    const { code, refusals } = await refusalOf(startWatcher(['--url', app.baseUrl, '--after', 'not-a-cursor']));
    expect(code).toBe(1);
    expect(refusals).toEqual([expect.stringMatching(/^watch: refused \(BAD_USER_INPUT\): .*after/)]);
  });

  it('refuses a bad argument with a message naming it, connecting nowhere', async () => {
    const watcher = startWatcher(['--account', '12345']);
    expect(await watcher.exited).toBe(2);
    expect(watcher.notes[0]).toBe('watch: --account must be 10 digits, got "12345"');
  });
});
