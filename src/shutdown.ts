// The shutdown's one budget. The contract promises an exit within 10 seconds of SIGTERM; every stage's
// deadline is derived here from that budget, counted from the signal, so the stages cannot add up to
// more than it, and changing one share moves the others.

/** From the signal to the process gone: the contract's 10 seconds. */
export const SHUTDOWN_BUDGET_MS = 10_000;

/** Kept after the last deadline for the final log lines to reach stdout and the process to end. */
const EXIT_MARGIN_MS = 500;
/** Between the tracing flush's deadline and the exit's, so a flush cut short never races the forced exit. */
const FLUSH_MARGIN_MS = 500;
/** The most the spans still batched after the drain may take to export: a collector that does not answer costs no more. */
export const TRACING_FLUSH_MS = 2_000;

/** Each stage's deadline, in ms after the signal. */
export const SHUTDOWN_DEADLINES = deadlines(SHUTDOWN_BUDGET_MS);

function deadlines(budgetMs: number) {
  const exitMs = budgetMs - EXIT_MARGIN_MS;
  const tracingFlushMs = exitMs - FLUSH_MARGIN_MS;
  return {
    /**
     * Requests still in flight are cut, leaving the tracing flush its whole share; closing the store
     * and pub/sub (quick once no request holds them) comes out of that share.
     */
    connectionsMs: tracingFlushMs - TRACING_FLUSH_MS,
    /** The tracing flush is abandoned, whatever it had left. */
    tracingFlushMs,
    /** The process exits 1 with whatever is still closing: the drain has run out of time. */
    exitMs,
  } as const;
}

/** How long the tracing flush may take when it starts `elapsedMs` after the signal. */
export function tracingFlushTimeout(elapsedMs: number): number {
  return Math.max(0, Math.min(TRACING_FLUSH_MS, SHUTDOWN_DEADLINES.tracingFlushMs - elapsedMs));
}
