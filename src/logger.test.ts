import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';
import { onCleanup } from '../test/helpers/cleanup.ts';
import { expire } from '../test/helpers/wait.ts';

const LOGGER = new URL('./logger.ts', import.meta.url).href;

/** Runs `body` in a fresh Node process with `logger` made by createLogger('info'); its stdout, as it comes. */
function runWithLogger(body: string) {
  const script = `import { createLogger, flushLogs } from ${JSON.stringify(LOGGER)};\nconst logger = createLogger('info');\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  onCleanup(() => void (child.exitCode === null && child.kill('SIGKILL')));
  let stdout = '';
  const written = new Set<{ text: string; resolve: () => void }>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    for (const waiter of written) if (stdout.includes(waiter.text)) waiter.resolve();
  });
  return {
    child,
    lines: () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { msg: string }),
    /** Resolves once `text` has been written to stdout. */
    wrote(text: string): Promise<void> {
      const arrived = Promise.withResolvers<void>();
      const waiter = { text, resolve: arrived.resolve };
      written.add(waiter);
      if (stdout.includes(text)) arrived.resolve();
      return arrived.promise.finally(() => written.delete(waiter));
    },
  };
}

// Lines are buffered and written off the request path; these are the promises that keeps.
describe('the process logger', () => {
  it('writes a line within a moment even when nothing else is logged', async () => {
    // The process lives a minute (killed after the test): a line held until exit would never come in time.
    const run = runWithLogger(`logger.info('alone'); setTimeout(() => {}, 60_000);`);
    await expire(run.wrote('alone'), 'the line, while the process runs', 10_000);
    expect(run.lines().map((line) => line.msg)).toEqual(['alone']);
    expect(run.child.exitCode).toBeNull(); // written while the process still runs, not at its exit
  });

  it('loses no line when the process dies of an uncaught error right after logging', async () => {
    const run = runWithLogger(
      `for (let i = 0; i < 3; i += 1) logger.info('line ' + i);\nlogger.error('last words');\nthrow new Error('crash');`,
    );
    const [code] = await once(run.child, 'exit');
    expect(code).not.toBe(0);
    expect(run.lines().map((line) => line.msg)).toEqual(['line 0', 'line 1', 'line 2', 'last words']);
  });

  it('loses no line on process.exit', async () => {
    const run = runWithLogger(`logger.info('before exit'); process.exit(3);`);
    const [code] = await once(run.child, 'exit');
    expect(code).toBe(3);
    expect(run.lines().map((line) => line.msg)).toEqual(['before exit']);
  });

  it('flushes and exits promptly when the reader of stdout has gone (EPIPE), instead of retrying the write for ever', async () => {
    const run = runWithLogger(
      `logger.info('first');\nprocess.on('SIGUSR2', async () => { logger.info('after the reader left'); await flushLogs(logger, 5_000); process.exit(0); });\nsetTimeout(() => {}, 60_000);`,
    );
    await expire(run.wrote('first'), 'the first line', 10_000);
    run.child.stdout.destroy();
    run.child.kill('SIGUSR2');
    const [code] = (await expire(once(run.child, 'exit'), 'the exit after the reader left', 10_000)) as [number];
    expect(code).toBe(0);
  });

  it('gives the output up at the bound of the flush when the reader has stopped reading, so the exit is not held', async () => {
    // Far more than a pipe holds: with nobody reading, stdout answers EAGAIN until the flush gives up.
    // process.stdout is opened first, as main.ts opens it, which makes a pipe non-blocking.
    const run = runWithLogger(
      `process.stdout.on('error', () => {});\nfor (let i = 0; i < 2_000; i += 1) logger.info('x'.repeat(200));\nawait flushLogs(logger, 300);\nprocess.exit(0);`,
    );
    run.child.stdout.pause();
    run.child.stdout.removeAllListeners('data');
    const [code] = (await expire(once(run.child, 'exit'), 'the exit with a stalled reader', 10_000)) as [number];
    expect(code).toBe(0);
  });

  it("never writes a caller's token, whichever field carries it", async () => {
    const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzY29wZSI6ImNvbGxlY3Rpb25zOnJlYWQifQ.c2lnbmF0dXJl';
    const run = runWithLogger(
      `logger.info({ headers: { authorization: 'Bearer ${token}' }, connectionParams: { Authorization: 'Bearer ${token}' }, ` +
        `upgrade: { headers: { authorization: 'Bearer ${token}' } }, caller: { token: '${token}' } }, 'logged'); setTimeout(() => process.exit(0), 200);`,
    );
    await once(run.child, 'exit');
    expect(run.lines().map((line) => line.msg)).toEqual(['logged']);
    expect(JSON.stringify(run.lines())).not.toContain(token.split('.')[1]);
  });
});

describe('the logger format', () => {
  /** A logger writing to a stream of our own; each line written, colours stripped. */
  function capture(pretty: boolean) {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...stripVTControlCharacters(chunk.toString('utf8')).split('\n').filter(Boolean));
        done();
      },
    });
    return { logger: createLogger('info', { pretty, destination }), lines };
  }

  it('writes a readable line, not JSON, when pretty: level, message and fields, secrets still censored', () => {
    const { logger, lines } = capture(true);
    logger.info(
      { url: 'http://localhost:4001/graphql', req: { headers: { authorization: 'Bearer s3cret-t0ken' } } },
      'bank subgraph listening',
    );
    expect(lines).toHaveLength(1);
    expect(() => JSON.parse(lines[0]!)).toThrow(SyntaxError);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: bank subgraph listening /);
    expect(lines[0]).toContain('"url":"http://localhost:4001/graphql"');
    expect(lines[0]).toContain('[redacted]');
    expect(lines[0]).not.toContain('s3cret-t0ken');
    expect(lines[0]).not.toContain('bank-subgraph');
  });

  it('writes JSON lines otherwise, with the service and secrets censored', () => {
    const { logger, lines } = capture(false);
    logger.warn({ req: { headers: { authorization: 'Bearer s3cret-t0ken' } } }, 'a warning');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 40,
      service: 'bank-subgraph',
      msg: 'a warning',
      req: { headers: { authorization: '[redacted]' } },
    });
  });
});
