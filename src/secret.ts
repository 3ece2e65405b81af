import { hash, timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A configured secret. It prints as `[redacted]` wherever it ends up (logs, JSON, util.inspect,
 * template strings), so a config object can be logged or thrown without leaking; only `reveal()`
 * hands out the value, at the one place that sends it to the bank.
 */
export class Secret {
  readonly #value: string;
  /** The value's SHA-256, made on first comparison: the webhook compares on every delivery. */
  #digest: Buffer | undefined;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret's value; call it only where the value leaves the process for its owner. */
  reveal(): string {
    return this.#value;
  }

  /**
   * Whether `candidate` is this secret, in constant time. Both sides are hashed to SHA-256 first,
   * so the buffers compared are always the same length and the time reveals neither the value nor
   * its length. The subgraph's one constant-time comparison: every secret comparison comes here.
   */
  equals(candidate: string): boolean {
    this.#digest ??= sha256(this.#value);
    return timingSafeEqual(sha256(candidate), this.#digest);
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

function sha256(text: string): Buffer {
  // One-shot: no Hash object per call.
  return hash('sha256', text, 'buffer');
}
