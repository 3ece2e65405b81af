/**
 * The PostgreSQL store's statement runner: what happens to the pooled connection when a statement
 * is answered, fails, or is refused before it is sent. (A statement that is never answered: the
 * stalled link in test/postgres-outage.test.ts.)
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { databaseUrl } from '../../test/helpers/stores.ts';
import { withDeadline } from './postgres-deadline.ts';

function poolOf(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  onCleanup(() => pool.end());
  return pool;
}

/** The server-side id of the connection the statement ran on. */
async function backendPid(run: ReturnType<typeof withDeadline>): Promise<number> {
  const { rows } = await run<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' });
  return rows[0]!.pid;
}

describe.skipIf(!databaseUrl)('the PostgreSQL statement runner', () => {
  it('answers a statement and hands its connection back to the pool for the next', async () => {
    const pool = poolOf(databaseUrl!);
    const run = withDeadline(pool, 5_000);
    const first = await backendPid(run);
    expect(await backendPid(run)).toBe(first);
    expect(pool.idleCount).toBe(1);
  });

  it('passes a failed statement’s error on and closes that connection: the next statement gets a fresh one', async () => {
    const pool = poolOf(databaseUrl!);
    const run = withDeadline(pool, 5_000);
    const before = await backendPid(run);
    await expect(run({ text: 'SELECT 1 / 0' })).rejects.toThrow(/division by zero/);
    expect(await backendPid(run)).not.toBe(before);
    expect(pool.totalCount).toBe(1);
  });

  it('gives the connection back at once when pg refuses the statement before sending it', async () => {
    const pool = poolOf(databaseUrl!);
    const run = withDeadline(pool, 60_000);
    await expect(run(null as unknown as pg.QueryConfig)).rejects.toThrow(TypeError);
    // Not held until the deadline: both connections of the pool can still be had now.
    const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
    a.release();
    b.release();
  });
});
