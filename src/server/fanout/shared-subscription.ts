import type { ExecutionResult } from 'graphql';
import type WebSocket from 'ws';
import type { Recipient, SocketWriter } from './socket-writer.ts';

/** One client's subscription: its socket and the `id` of its `subscribe` message. */
export interface Subscriber {
  socket: WebSocket;
  id: string;
}

/** What a shared execution needs from its registry: serialising, writing, counting. */
export interface SharedSubscriptionHooks {
  writer: SocketWriter;
  /** The `payload` of a `next` message as JSON text, errors masked; called once per result. */
  serialise(result: ExecutionResult): string;
  /** One result was handed to `delivered` subscribers' sockets (written, or waiting behind their backlog). */
  onResult(delivered: number): void;
  /** A subscriber started (`joined`) or stopped receiving; `others` are those still receiving besides it. */
  onMembership(change: { joined: boolean; others: number }): void;
  /**
   * The execution ended, no one may join it any more: `left` when its last member did, `completed`
   * or `failed` when its source did, ending the `receiving` members that had been receiving.
   */
  onEnded(how: { reason: 'left' | 'completed' | 'failed'; receiving: number }): void;
  /** Returning the source failed (it is being dropped anyway). */
  onReturnError(error: unknown): void;
}

type Source = AsyncIterator<ExecutionResult>;
type Done = IteratorReturnResult<undefined>;
const DONE: Done = { done: true, value: undefined };

/**
 * One graphql-js execution shared by every subscriber of the same operation and variables. Each
 * result is serialised once and handed to every member's socket by the writer as a
 * graphql-transport-ws `next` frame (only the `id` differs), so graphql-ws never sees the results: a
 * member's own iterable yields nothing and finishes when the execution does, once its waiting frames
 * are written (graphql-ws then sends `complete`, or `error` with what the source threw), or when
 * graphql-ws returns it (client `complete`, socket closed). The source is pulled as fast as it yields,
 * never waiting on a socket; it is pulled once a member is registered and returned when the last leaves.
 */
export class SharedSubscription {
  readonly #source: Source;
  readonly #hooks: SharedSubscriptionHooks;
  readonly #members = new Set<Member>();
  #receiving = 0;
  #pulling = false;
  #ended = false;

  constructor(source: Source, hooks: SharedSubscriptionHooks) {
    this.#source = source;
    this.#hooks = hooks;
  }

  /** A member iterable to hand graphql-ws, or undefined when this execution has already ended. */
  join(subscriber: Subscriber): AsyncIterableIterator<ExecutionResult> | undefined {
    if (this.#ended) return undefined;
    const member = new Member(subscriber, this, this.#hooks.writer);
    this.#members.add(member);
    return member;
  }

  /** graphql-ws is iterating the member: from now on results are written to it. */
  receive(member: Member): void {
    if (this.#ended) return member.end();
    member.receiving = true;
    this.#hooks.onMembership({ joined: true, others: this.#receiving++ });
    if (!this.#pulling) {
      this.#pulling = true;
      void this.#pull();
    }
  }

  /** The member is gone (its client completed, its socket closed): nothing more is written to it. */
  leave(member: Member): void {
    member.recipient.forget();
    this.#remove(member);
  }

  /** The last member out returns the source, which unsubscribes from the feed. */
  #remove(member: Member): void {
    if (!this.#members.delete(member)) return;
    if (member.receiving) this.#hooks.onMembership({ joined: false, others: --this.#receiving });
    if (this.#members.size > 0 || this.#ended) return;
    this.#end({ reason: 'left', receiving: 0 });
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
    this.#end({ reason: failure ? 'failed' : 'completed', receiving: this.#receiving });
    // Each member ends once what waits for it has been written: its `complete` comes after its last `next`.
    for (const member of [...this.#members]) {
      this.#remove(member);
      member.end(failure);
    }
  }

  #write(result: ExecutionResult): void {
    const tail = Buffer.from(`,"type":"next","payload":${this.#hooks.serialise(result)}}`);
    let delivered = 0;
    for (const member of this.#members) {
      if (member.receiving && member.recipient.send(tail)) delivered += 1;
    }
    this.#hooks.onResult(delivered);
  }

  #end(how: Parameters<SharedSubscriptionHooks['onEnded']>[0]): void {
    this.#ended = true;
    this.#hooks.onEnded(how);
  }
}

/** The iterable graphql-ws holds for one subscriber of a shared execution. */
class Member implements AsyncIterableIterator<ExecutionResult> {
  readonly subscriber: Subscriber;
  readonly recipient: Recipient;
  receiving = false;
  readonly #execution: SharedSubscription;
  #pending: PromiseWithResolvers<Done> | undefined;
  #outcome: { failure?: { error: unknown } | undefined } | undefined;
  /** Ended by the execution while frames still waited for it: settled once they are written. */
  #ending: { failure?: { error: unknown } | undefined } | undefined;

  constructor(subscriber: Subscriber, execution: SharedSubscription, writer: SocketWriter) {
    this.subscriber = subscriber;
    this.recipient = writer.recipient(subscriber.socket, subscriber.id);
    this.recipient.onDrained = () => {
      if (this.#ending) this.#finish(this.#ending.failure);
    };
    this.#execution = execution;
  }

  // graphql-ws calls next() once it has registered the subscription, and never again until it settles.
  next(): Promise<Done> {
    if (this.#outcome) return this.#settled();
    this.#pending ??= Promise.withResolvers<Done>();
    const { promise } = this.#pending;
    if (!this.receiving) this.#execution.receive(this);
    return promise;
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
