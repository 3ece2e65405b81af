import type { ExecutionResult } from 'graphql';
import type { NextMessageTail } from './frames.ts';
import type { Recipient } from './socket-connection.ts';

/** What a shared execution needs from its registry: presenting each result, and counting. */
export interface SharedSubscriptionHooks {
  /** The result as every member's `next` message carries it (errors masked); called once per result. */
  present(result: ExecutionResult): NextMessageTail;
  /** One result was handed to `reached` members' sockets (written, or waiting behind their backlog). */
  onResult(reached: number): void;
  /** A member joined or left; `others` are the members besides it. */
  onMembership(change: { joined: boolean; others: number }): void;
  /**
   * The execution ended, no one may join it any more: `left` when its last member did, `completed`
   * or `failed` when its source did, ending the `members` it had then.
   */
  onEnded(how: { reason: 'left' | 'completed' | 'failed'; members: number }): void;
  /** Returning the source failed (it is being dropped anyway). */
  onReturnError(error: unknown): void;
}

type Source = AsyncIterator<ExecutionResult>;
type Done = IteratorReturnResult<undefined>;
const DONE: Done = { done: true, value: undefined };

/**
 * One graphql-js execution shared by every subscriber of the same operation and variables. Each
 * result is presented once and its message written to every member's socket with only the `id`
 * differing, so graphql-ws never sees the results. What graphql-ws holds for a member is an iterable
 * that yields nothing: graphql-ws keeps its one `next()` pending while the execution runs, and
 * sends `complete` (or `error`, with what the source threw) once it settles, after the member's
 * waiting messages are written; graphql-ws returns it when the client completes or the socket
 * closes (server/graphql-ws.contract.test.ts pins each of these). The source is pulled as fast as it
 * yields, never waiting on a socket, from the first member's joining until the last one leaves.
 */
export class SharedSubscription {
  readonly #source: Source;
  readonly #hooks: SharedSubscriptionHooks;
  readonly #members = new Set<Member>();
  #pulling = false;
  #ended = false;

  constructor(source: Source, hooks: SharedSubscriptionHooks) {
    this.#source = source;
    this.#hooks = hooks;
  }

  /**
   * A member writing to `recipient`, receiving from now on: the iterable to hand graphql-ws, or
   * undefined when this execution has already ended.
   */
  join(recipient: Recipient): AsyncIterableIterator<ExecutionResult> | undefined {
    if (this.#ended) return undefined;
    const member = new Member(recipient, this);
    this.#hooks.onMembership({ joined: true, others: this.#members.size });
    this.#members.add(member);
    if (!this.#pulling) {
      this.#pulling = true;
      void this.#pull();
    }
    return member;
  }

  /** The member is gone (its client completed, its socket closed): nothing more is written to it. */
  leave(member: Member): void {
    member.recipient.forget();
    this.#remove(member);
  }

  /** The last member out returns the source, which unsubscribes from the feed. */
  #remove(member: Member): void {
    if (!this.#members.delete(member)) return;
    this.#hooks.onMembership({ joined: false, others: this.#members.size });
    if (this.#members.size > 0 || this.#ended) return;
    this.#end({ reason: 'left', members: 0 });
    this.#source.return?.().catch((error: unknown) => this.#hooks.onReturnError(error));
  }

  async #pull(): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      for (;;) {
        const step = await this.#source.next();
        if (step.done || this.#ended) break;
        this.#write(step.value);
      }
    } catch (error) {
      failure = { error };
    }
    if (this.#ended) return;
    this.#end({ reason: failure ? 'failed' : 'completed', members: this.#members.size });
    // Each member ends once what waits for it has been written: its `complete` comes after its last `next`.
    for (const member of [...this.#members]) {
      this.#remove(member);
      member.end(failure);
    }
  }

  #write(result: ExecutionResult): void {
    const tail = this.#hooks.present(result);
    let reached = 0;
    for (const member of this.#members) {
      if (member.recipient.send(tail)) reached += 1;
    }
    this.#hooks.onResult(reached);
  }

  #end(how: Parameters<SharedSubscriptionHooks['onEnded']>[0]): void {
    this.#ended = true;
    this.#hooks.onEnded(how);
  }
}

/** The iterable graphql-ws holds for one subscriber of a shared execution. */
class Member implements AsyncIterableIterator<ExecutionResult> {
  readonly recipient: Recipient;
  readonly #execution: SharedSubscription;
  #pending: PromiseWithResolvers<Done> | undefined;
  #outcome: { failure?: { error: unknown } | undefined } | undefined;
  /** Ended by the execution while messages still waited for it: settled once they are written. */
  #ending: { failure?: { error: unknown } | undefined } | undefined;

  constructor(recipient: Recipient, execution: SharedSubscription) {
    this.recipient = recipient;
    this.recipient.onDrained = () => {
      if (this.#ending) this.#finish(this.#ending.failure);
    };
    this.#execution = execution;
  }

  /** Settles when the member is over; every call until then shares the one pending step. */
  next(): Promise<Done> {
    if (this.#outcome) return this.#settled();
    this.#pending ??= Promise.withResolvers<Done>();
    return this.#pending.promise;
  }

  return(): Promise<Done> {
    this.#execution.leave(this);
    this.#finish(undefined);
    return Promise.resolve(DONE);
  }

  throw(): Promise<Done> {
    return this.return();
  }

  /** Finishes the member once nothing waits for it: its pending next() completes, or rejects with what the source threw. */
  end(failure?: { error: unknown }): void {
    if (this.recipient.waiting.value > 0) this.#ending = { failure };
    else this.#finish(failure);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #finish(failure: { error: unknown } | undefined): void {
    if (this.#outcome) return;
    this.#outcome = { failure };
    if (this.#pending) this.#settled().then(this.#pending.resolve, this.#pending.reject);
  }

  #settled(): Promise<Done> {
    const failure = this.#outcome?.failure;
    if (!failure) return Promise.resolve(DONE);
    // Reported once: a second next() after the rejection is a plain end.
    this.#outcome = {};
    return Promise.reject(failure.error);
  }
}
