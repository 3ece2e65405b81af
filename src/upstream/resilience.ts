/**
 * What keeps a failing bank from taking us down, and us from piling onto it: a circuit breaker per
 * area (opossum), and retries of idempotent bank reads, bounded three ways: a few attempts with jittered exponential
 * backoff, all inside the call's one `BANK_TIMEOUT_MS` deadline, and a retry budget per area so an
 * outage is never multiplied (retries stay a small share of the area's recent calls). The circuit
 * breaker sits around each whole call, its retries inside (http.ts): once it opens, calls fail fast
 * before the retrier is reached, so its refusals are never retried.
 *
 * Written here rather than taken from cockatiel: its retry knows no deadline and no budget, which is
 * most of this file, and its breaker would replace opossum's (with a half-open state entered only on
 * the next call, changing what bank_circuit_open reports) without removing anything of this.
 */
import CircuitBreaker from 'opossum';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';

/** Circuit-breaker settings (opossum's names). */
export interface BreakerOptions {
  /** Calls in the rolling window before the breaker may open at all. */
  volumeThreshold: number;
  /** Share of failed calls (unavailability only) in the window that opens it. */
  errorThresholdPercentage: number;
  /** How long it stays open before letting one trial call through. */
  resetTimeout: number;
  /** Length of the rolling window. */
  rollingCountTimeout: number;
}

/**
 * Hystrix's thresholds (20 calls in the window, more than half failing; resilience4j and Polly wait
 * for 100), so it opens on an outage, not a blip. A call is what a user asked for, its retries
 * included: one outcome per call, as a Hystrix command is. Counting attempts (resilience4j's and
 * Polly's usual order, retry outside the breaker) would count a failed user call up to
 * `maxAttempts` times, so how many open it would move with the retry budget; and the retrier has
 * already absorbed a blip, so what is left after it is the outcome worth weighing.
 */
export const defaultBreakerOptions: BreakerOptions = {
  volumeThreshold: 20,
  errorThresholdPercentage: 50,
  resetTimeout: 15_000,
  rollingCountTimeout: 10_000,
};

/** One area's breaker: `fire(call)` runs `call` (one whole bank call, retries included) unless open. */
export type AreaBreaker = CircuitBreaker<[call: () => Promise<unknown>], unknown>;

/**
 * One area's breaker, reporting its state as `bank_circuit_open` and in the log. Only failures
 * `counts` accepts weigh against it: a refusal proves the bank is up.
 */
export function createAreaBreaker(
  area: string,
  options: BreakerOptions,
  { logger, metrics, counts }: { logger: Logger; metrics: Pick<Metrics, 'bankCircuitOpen'>; counts: (error: unknown) => boolean },
): AreaBreaker {
  const breaker = new CircuitBreaker((call: () => Promise<unknown>) => call(), {
    ...options,
    name: area,
    // undici holds the time budget; an opossum time-out would leave the request running.
    timeout: false,
    errorFilter: (error: unknown) => !counts(error),
  });
  const state = metrics.bankCircuitOpen.labels({ area });
  state.set(0);
  breaker.on('open', () => {
    state.set(1);
    logger.warn({ area }, 'bank circuit opened: failing fast');
  });
  breaker.on('halfOpen', () => {
    state.set(0.5);
    logger.info({ area }, 'bank circuit half-open: trying one call');
  });
  breaker.on('close', () => {
    state.set(0);
    logger.info({ area }, 'bank circuit closed');
  });
  return breaker;
}

/** How retries are paced and bounded. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before retry n is a random wait up to min(maxDelayMs, baseDelayMs × 2^(n−1)) ("full jitter"). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A retry starts only if at least this share of the call's budget is left after its backoff. */
  minRemainingShare: number;
  /** Retries per area in the last `windowMs`: at most `ratio` × calls, but always `floor` (a quiet area can still retry). */
  budget: { windowMs: number; ratio: number; floor: number };
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  minRemainingShare: 0.25,
  budget: { windowMs: 10_000, ratio: 0.2, floor: 3 },
};

/** What `run` needs to know of one call. */
export interface RetriedCall {
  area: string;
  operation: string;
  /** Only reads are retried; anything that may change state at the bank is sent once. */
  idempotent: boolean;
}

export interface RetryEvent {
  /** The attempt about to start (2 for the first retry). */
  attempt: number;
  delayMs: number;
  error: unknown;
}

export interface Retrier {
  /**
   * Runs `attempt(remainingMs)` until it succeeds, fails with something `isTransient` does not
   * accept, or a retry is not allowed (attempts, deadline, budget). Throws the last failure.
   */
  run<T>(call: RetriedCall, attempt: (remainingMs: number) => Promise<T>, isTransient: (error: unknown) => boolean): Promise<T>;
}

export interface RetrierOptions {
  timeoutMs: number;
  onRetry?: (call: RetriedCall, event: RetryEvent) => void;
  /** Told when a transient failure is not retried for want of budget or time. */
  onGiveUp?: (call: RetriedCall, reason: 'budget' | 'deadline' | 'attempts') => void;
  now?: () => number;
  random?: () => number;
}

/** Creates the retrier shared by every area (one retry budget per area inside). */
export function createRetrier(options: RetrierOptions): Retrier {
  const policy = defaultRetryPolicy;
  const now = options.now ?? performance.now.bind(performance);
  const random = options.random ?? Math.random;
  const budgets = new Map<string, RetryBudget>();
  const budgetOf = (area: string) => {
    let budget = budgets.get(area);
    if (budget === undefined) budgets.set(area, (budget = createRetryBudget(policy.budget, now)));
    return budget;
  };

  return {
    async run(call, attempt, isTransient) {
      const deadline = now() + options.timeoutMs;
      const budget = budgetOf(call.area);
      budget.recordCall();
      for (let number = 1; ; number += 1) {
        try {
          // Whole milliseconds: AbortSignal.timeout and undici refuse fractions.
          return await attempt(Math.max(1, Math.floor(deadline - now())));
        } catch (error) {
          if (!call.idempotent || !isTransient(error)) throw error;
          const delayMs = Math.round(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (number - 1)));
          const refusal =
            number >= policy.maxAttempts
              ? 'attempts'
              : deadline - (now() + delayMs) < options.timeoutMs * policy.minRemainingShare
                ? 'deadline'
                : budget.tryRetry()
                  ? undefined
                  : 'budget';
          if (refusal !== undefined) {
            options.onGiveUp?.(call, refusal);
            throw error;
          }
          options.onRetry?.(call, { attempt: number + 1, delayMs, error });
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        }
      }
    },
  };
}

interface RetryBudget {
  recordCall(): void;
  /** Spends one retry when the window allows it. */
  tryRetry(): boolean;
}

/** Calls and retries of one area in a rolling window of one-second buckets. */
function createRetryBudget({ windowMs, ratio, floor }: RetryPolicy['budget'], now: () => number): RetryBudget {
  const bucketMs = Math.min(1_000, windowMs);
  const buckets = new Map<number, { calls: number; retries: number }>();
  const current = () => {
    const index = Math.floor(now() / bucketMs);
    for (const old of buckets.keys()) if (old <= index - windowMs / bucketMs) buckets.delete(old);
    let bucket = buckets.get(index);
    if (bucket === undefined) buckets.set(index, (bucket = { calls: 0, retries: 0 }));
    return bucket;
  };
  return {
    recordCall() {
      current().calls += 1;
    },
    tryRetry() {
      const bucket = current();
      let calls = 0;
      let retries = 0;
      for (const b of buckets.values()) {
        calls += b.calls;
        retries += b.retries;
      }
      if (retries >= Math.max(floor, ratio * calls)) return false;
      bucket.retries += 1;
      return true;
    },
  };
}
