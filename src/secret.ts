import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A configured secret. It prints as `[redacted]` wherever it ends up (logs, JSON, util.inspect,
 * template strings), so a config object can be logged or thrown without leaking; only `reveal()`
 * hands out the value, at the one place that sends it to the bank.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret's value; call it only where the value leaves the process for its owner. */
  reveal(): string {
    return this.#value;
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
