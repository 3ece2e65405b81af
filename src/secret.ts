import { timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A configured secret. It prints as `[redacted]` wherever it ends up (logs, JSON, util.inspect,
 * template strings), so a config object can be logged or thrown without leaking; only `reveal()`
 * hands out the value, at the one place that sends it to the bank.
 */
export class Secret {
  readonly #value: string;
  /** The value's bytes, made on first comparison: the webhook compares on every delivery. */
  #bytes: Buffer | undefined;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret's value; call it only where the value leaves the process for its owner. */
  reveal(): string {
    return this.#value;
  }

  /**
   * Whether `candidate` is this secret, in constant time: the time depends on the value's length
   * only, never on the candidate or on how much of it is right. A candidate of another length is
   * not compared at all; the value is compared with itself instead, so that case takes the same
   * time. The subgraph's one constant-time comparison: every secret comparison comes here.
   */
  equals(candidate: string): boolean {
    const expected = (this.#bytes ??= Buffer.from(this.#value, 'utf8'));
    const given = Buffer.from(candidate, 'utf8');
    const sameLength = given.length === expected.length;
    return timingSafeEqual(sameLength ? given : expected, expected) && sameLength;
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
