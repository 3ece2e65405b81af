import { GraphQLError, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { WaitingCount } from '../../collection/subscriber-queue.ts';
import { SharedSubscription, type SharedSubscriptionHooks } from './shared-subscription.ts';
import { messagePrefix, nextMessage, nextMessageTail, type NextMessageTail } from './frames.ts';
import type { Recipient } from './socket-connection.ts';

/** A source the test pushes results into, recording whether it was returned. */
function controlledSource() {
  const queue: PromiseWithResolvers<IteratorResult<ExecutionResult>>[] = [Promise.withResolvers()];
  let returned = false;
  const source: AsyncIterator<ExecutionResult> = {
    next: () => queue[0]!.promise.then((step) => (queue.shift(), step)),
    return: async () => {
      returned = true;
      queue.at(-1)!.resolve({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
  };
  const settle = (step: IteratorResult<ExecutionResult>) => {
    queue.push(Promise.withResolvers());
    queue.at(-2)!.resolve(step);
  };
  return {
    source,
    push: (result: ExecutionResult) => settle({ done: false, value: result }),
    finish: () => settle({ done: true, value: undefined }),
    fail: (error: Error) => {
      queue.push(Promise.withResolvers());
      queue.at(-2)!.reject(error);
    },
    returned: () => returned,
  };
}

/**
 * Hooks that present each result with the real frame writer, and recipients (`recipient(socket, id)`)
 * that record each message by socket name; with `hold`, messages wait (counted for their member, as
 * behind a backed-up socket) until `release()` writes them.
 */
function recordingHooks(options: { hold?: boolean } = {}) {
  const frames: { socket: string; frame: string }[] = [];
  const held: { recipient: Recipient; write: () => void }[] = [];
  let presented = 0;
  let ended: string | undefined;
  const recipient = (socket: string, id: string): Recipient => {
    const write = (tail: NextMessageTail) => () => void frames.push({ socket, frame: nextMessage(messagePrefix(id), tail).toString() });
    const made: Recipient = {
      waiting: new WaitingCount({ inc: () => undefined, dec: () => undefined }, () => undefined),
      send(tail) {
        if (!options.hold) write(tail)();
        else {
          held.push({ recipient: made, write: write(tail) });
          made.waiting.add();
        }
        return true;
      },
      forget: () => made.waiting.clear(),
      onDrained: () => undefined,
    };
    return made;
  };
  const hooks: SharedSubscriptionHooks = {
    present: (result) => {
      presented += 1;
      return nextMessageTail(result);
    },
    onResult: () => undefined,
    onMembership: () => undefined,
    onEnded: ({ reason }) => {
      ended = reason;
    },
    onReturnError: () => undefined,
  };
  const release = () => {
    for (const { recipient: waiting, write } of held.splice(0)) {
      if (waiting.waiting.value === 0) continue; // forgotten
      waiting.waiting.remove();
      write();
      if (waiting.waiting.value === 0) waiting.onDrained();
    }
  };
  return { hooks, recipient, frames, presented: () => presented, ended: () => ended, release };
}

const settleEvents = () => new Promise((resolve) => setImmediate(resolve));
const result = (n: number): ExecutionResult => ({ data: { n } });

describe('SharedSubscription', () => {
  it('presents each result once and writes a graphql-transport-ws next message per member', async () => {
    const { source, push } = controlledSource();
    const { hooks, recipient, frames, presented } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', 'one'))!;
    const b = execution.join(recipient('b', 'two"quoted'))!;
    void a.next();
    void b.next();
    push(result(1));
    await settleEvents();
    expect(presented()).toBe(1);
    expect(frames).toEqual([
      { socket: 'a', frame: '{"id":"one","type":"next","payload":{"data":{"n":1}}}' },
      { socket: 'b', frame: '{"id":"two\\"quoted","type":"next","payload":{"data":{"n":1}}}' },
    ]);
    expect(frames.map((f) => JSON.parse(f.frame).id)).toEqual(['one', 'two"quoted']);
  });

  it('writes to a member from the moment it joins, none of the results before', async () => {
    const { source, push } = controlledSource();
    const { hooks, recipient, frames } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    void execution.join(recipient('a', '1'))!.next();
    push(result(1));
    await settleEvents();
    execution.join(recipient('late', '1'));
    push(result(2));
    await settleEvents();
    expect(frames.map((f) => `${f.socket}:${JSON.parse(f.frame).payload.data.n}`)).toEqual(['a:1', 'a:2', 'late:2']);
  });

  it('pulls its source once a member joins, not before', async () => {
    let pulled = 0;
    const source: AsyncIterator<ExecutionResult> = { next: () => ((pulled += 1), new Promise(() => undefined)) };
    const { hooks, recipient } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    await settleEvents();
    expect(pulled).toBe(0);
    execution.join(recipient('a', '1'));
    execution.join(recipient('b', '1'));
    await settleEvents();
    expect(pulled).toBe(1);
  });

  it('keeps the others when one member leaves, and returns the source when the last one does', async () => {
    const { source, push, returned } = controlledSource();
    const { hooks, recipient, frames, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', '1'))!;
    const b = execution.join(recipient('b', '1'))!;
    const aDone = a.next();
    void b.next();
    await a.return!();
    expect(await aDone).toEqual({ done: true, value: undefined });
    push(result(1));
    await settleEvents();
    expect(frames.map((f) => f.socket)).toEqual(['b']);
    expect(returned()).toBe(false);
    await b.return!();
    expect(returned()).toBe(true);
    expect(ended()).toBe('left');
    expect(execution.join(recipient('c', '1'))).toBeUndefined();
  });

  it('completes every member when the source completes', async () => {
    const { source, finish } = controlledSource();
    const { hooks, recipient, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', '1'))!;
    const b = execution.join(recipient('b', '1'))!;
    const steps = [a.next(), b.next()];
    finish();
    expect(await Promise.all(steps)).toEqual([
      { done: true, value: undefined },
      { done: true, value: undefined },
    ]);
    expect(ended()).toBe('completed');
  });

  it('rejects every member with what the source threw, so graphql-ws sends each an error message', async () => {
    const { source, fail } = controlledSource();
    const { hooks, recipient, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', '1'))!;
    const b = execution.join(recipient('b', '1'))!;
    const steps = [a.next(), b.next()];
    const failure = new GraphQLError('the feed broke');
    fail(failure);
    const outcomes = await Promise.allSettled(steps);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
    expect(await a.next()).toEqual({ done: true, value: undefined });
    expect(ended()).toBe('failed');
  });

  it('completes a member only after the frames that waited for its socket are written, so `complete` follows its last `next`', async () => {
    const { source, push, finish } = controlledSource();
    const { hooks, recipient, frames, release } = recordingHooks({ hold: true });
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', '1'))!;
    let completed = false;
    const step = a.next().then((value) => ((completed = true), value));
    push(result(1));
    push(result(2));
    finish();
    await settleEvents();
    expect(completed).toBe(false);
    release();
    expect(await step).toEqual({ done: true, value: undefined });
    expect(frames.map((f) => JSON.parse(f.frame).payload.data.n)).toEqual([1, 2]);
  });

  it('drops what waited for a member that leaves, and completes it at once', async () => {
    const { source, push } = controlledSource();
    const { hooks, recipient, frames, release } = recordingHooks({ hold: true });
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join(recipient('a', '1'))!;
    const step = a.next();
    push(result(1));
    await settleEvents();
    await a.return!();
    expect(await step).toEqual({ done: true, value: undefined });
    release();
    expect(frames).toEqual([]);
  });
});
