// The shutdown's one budget. The contract promises an exit within 10 seconds of SIGTERM; every stage's
// deadline is derived here from that budget, counted from the signal, so the stages cannot add up to
// more than it, and changing one share moves the others.

/** From the signal to the process gone: the contract's 10 seconds. */
export const SHUTDOWN_BUDGET_MS = 10_000;

/** Kept after the forced exit's deadline for the process to end. */
const EXIT_MARGIN_MS = 500;
/** Between the log flush's deadline and the forced exit's, so a flush given up never races the exit. */
const LOG_FLUSH_MARGIN_MS = 250;
/** Between the tracing flush's deadline and the log flush's, so the last lines have a moment of their own. */
const FLUSH_MARGIN_MS = 250;
/** The most the spans still batched after the drain may take to export: a collector that does not answer costs no more. */
export const TRACING_FLUSH_MS = 2_000;

/** Each stage's deadline, in ms after the signal. */
export const SHUTDOWN_DEADLINES = deadlines(SHUTDOWN_BUDGET_MS);

function deadlines(budgetMs: number) {
  const exitMs = budgetMs - EXIT_MARGIN_MS;
  const logFlushMs = exitMs - LOG_FLUSH_MARGIN_MS;
  const tracingFlushMs = logFlushMs - FLUSH_MARGIN_MS;
  return {
    /**
     * Requests still in flight are cut, leaving the tracing flush its whole share; closing the store
     * and pub/sub (quick once no request holds them) comes out of that share.
     */
    connectionsMs: tracingFlushMs - TRACING_FLUSH_MS,
    /** The tracing flush is abandoned, whatever it had left; a drain still closing is given up. */
    tracingFlushMs,
    /**
     * The last log lines are given up if stdout has not taken them (its reader gone or stalled):
     * the log output never holds the exit.
     */
    logFlushMs,
    /** The process exits 1 with whatever is still closing: the drain has run out of time. */
    exitMs,
  } as const;
}

/** How long the tracing flush may take when it starts `elapsedMs` after the signal. */
export function tracingFlushTimeout(elapsedMs: number): number {
  return Math.max(0, Math.min(TRACING_FLUSH_MS, SHUTDOWN_DEADLINES.tracingFlushMs - elapsedMs));
}

/** How long the last log lines may take to reach stdout when their flush starts `elapsedMs` after the signal. */
export function logFlushTimeout(elapsedMs: number): number {
  return Math.max(0, SHUTDOWN_DEADLINES.logFlushMs - elapsedMs);
}
