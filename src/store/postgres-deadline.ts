// Every statement of the PostgreSQL store runs through here: on a pooled connection, with a deadline
// for an answer, the client-side backstop for a server or network that stops answering altogether
// (statement_timeout covers a database that is slow but still talking).
import type pg from 'pg';

/** Runs one statement and answers its result; fails, the connection dropped, when no answer comes in time. */
export type RunQuery = <Row extends pg.QueryResultRow>(config: pg.QueryConfig) => Promise<pg.QueryResult<Row>>;

/**
 * Statements on `pool`, each failed after `timeoutMs` without an answer. The connection is then
 * released with the error, so the pool closes it rather than hand it out again (an answer that comes
 * later is dropped with it), as pg's own `query_timeout` does; that one is not used, for the reason
 * given at the call below.
 */
export function withDeadline(pool: pg.Pool, timeoutMs: number): RunQuery {
  return async <Row extends pg.QueryResultRow>(config: pg.QueryConfig) => {
    const client = await pool.connect();
    return new Promise<pg.QueryResult<Row>>((resolve, reject) => {
      let answered = false;
      const fail = (error: Error) => {
        if (answered) return;
        answered = true;
        clearTimeout(deadline);
        // Released with its error, the connection is closed, not handed out again. Our listener
        // stays on it: a late error from a connection being dropped must not go unheard (a crash).
        client.release(error);
        reject(error);
      };
      // A connection checked out of the pool has no listener of the pool's: without one, its
      // failure mid-statement would be an unhandled 'error' event, as pg-pool's own query knows.
      client.on('error', fail);
      const deadline = setTimeout(
        () => fail(new Error(`PostgreSQL gave no answer within ${timeoutMs} ms; the connection is dropped`)),
        timeoutMs,
      );
      const answer = (error: Error | undefined, result: pg.QueryResult<Row>) => {
        if (error) return fail(error);
        if (answered) return;
        answered = true;
        clearTimeout(deadline);
        client.off('error', fail);
        client.release();
        resolve(result);
      };
      try {
        // The callback form, as pg-pool's own query uses: with pg's promise form (or its query_timeout,
        // which wraps the callback the same way) each batch's parameters and rows outlived two
        // scavenges, promoted to the old generation under webhook load (docs/benchmarks.md, "What shapes the code").
        client.query<Row>(config, answer);
      } catch (error) {
        // A statement pg refuses before sending it: the connection goes back at once, not at the deadline.
        fail(error as Error);
      }
    });
  };
}
