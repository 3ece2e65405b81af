import { subscribe, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type WebSocket from 'ws';
import { reportTooFarBehind, type SubscriberConnection } from '../../collection/subscriber-queue.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics.ts';
import { traceSubscriptionEvent } from '../../telemetry/websocket.ts';
import { maskExecutionResult } from '../format-error.ts';
import { sharedExecutionKey, type SubscribeRequest } from './shareable.ts';
import { SharedSubscription, type SharedSubscriptionHooks } from './shared-subscription.ts';
import { createSocketWriter, type SocketWriter } from './socket-writer.ts';

export { SLOW_SOCKET_CLOSE } from './socket-writer.ts';

type SubscribeResult = AsyncIterableIterator<ExecutionResult> | ExecutionResult;

/** Shares subscription executions between the sockets of one graphql-ws server. */
export interface SubscriptionFanout {
  /** Records whose operation a context value was built for; returns the same value (graphql-ws `context`). */
  bind<T extends object>(contextValue: T, subscription: { socket: WebSocket; id: string; request: SubscribeRequest }): T;
  /** graphql-ws `subscribe`: joins a shared execution, or runs alone when the operation cannot share. */
  subscribe(args: ExecutionArgs): Promise<SubscribeResult>;
  /**
   * A socket as an operation's context offers it to the operation's stream: used by an operation
   * that runs alone (graphql-ws writes its results), never by a shared execution's source.
   */
  connection(socket: WebSocket): SubscriberConnection;
  /**
   * The keep-alive's verdict on a socket that answered no ping: one whose frames are still on their
   * way (ws holds some: its client stopped reading) is closed with 1013 and counted like one too far
   * behind; one with nothing on its way (a client that vanished) is cut, as graphql-ws would.
   */
  unresponsive(socket: WebSocket): void;
}

/**
 * One execution per distinct subscription (same text, operation name and variables), its results
 * written pre-serialised to every subscriber's socket; replays (`after`) and operations bound to no
 * socket run alone, as graphql-ws would run them. Metrics count subscribers, not executions, except
 * graphql_subscription_executions_total; a socket closed for falling behind counts as one early end.
 * A shared execution runs under a context of its own (`sharedContext()`), not under any member's:
 * its source's consumer is the execution, which never waits on a socket.
 */
export function createSubscriptionFanout(options: { logger: Logger; metrics: Metrics; sharedContext: () => unknown }): SubscriptionFanout {
  const { logger, metrics } = options;
  const writer = createSocketWriter({
    gauge: metrics.notificationsWaiting,
    onTooFarBehind: (details) => reportTooFarBehind({ logger, metrics }, details),
  });
  const bound = new WeakMap<object, { socket: WebSocket; id: string; request: SubscribeRequest }>();
  const executions = new Map<string, Promise<SharedSubscription | ExecutionResult>>();

  const start = (key: string, args: ExecutionArgs): Promise<SharedSubscription | ExecutionResult> => {
    const forget = () => executions.get(key) === entry && executions.delete(key);
    const entry: Promise<SharedSubscription | ExecutionResult> = (async () => {
      try {
        const result = await subscribe({ ...args, contextValue: options.sharedContext() });
        if (Symbol.asyncIterator in result) return new SharedSubscription(result, perSubscriberHooks({ logger, metrics, writer }, args, forget));
        // A refusal (BAD_USER_INPUT, say): every subscriber already waiting on it gets the same answer.
        forget();
        return result;
      } catch (error) {
        forget();
        throw error;
      }
    })();
    executions.set(key, entry);
    return entry;
  };

  return {
    bind(contextValue, subscription) {
      bound.set(contextValue, subscription);
      return contextValue;
    },
    async subscribe(args) {
      const subscription = typeof args.contextValue === 'object' && args.contextValue ? bound.get(args.contextValue) : undefined;
      const key = subscription && sharedExecutionKey(args, subscription.request);
      if (!subscription || key === undefined) return countedAlone(await subscribe(args), metrics);
      for (;;) {
        const execution = await (executions.get(key) ?? start(key, args));
        if (!(execution instanceof SharedSubscription)) return execution;
        // Undefined when it ended while this subscriber waited: start a fresh one.
        const member = execution.join(subscription);
        if (member) return member;
      }
    },
    connection: (socket) => writer.connection(socket),
    unresponsive(socket) {
      const bufferedBytes = socket.bufferedAmount;
      if (bufferedBytes === 0 || !writer.closeTooFarBehind(socket, { unansweredPing: { bufferedBytes } })) socket.terminate();
    },
  };
}

/**
 * A shared execution's hooks: masking, and metrics that stay per subscriber. The stream counts its
 * execution as one subscription, each result as one delivery and its early end as one; the members
 * beyond the first add the rest. `forget` drops the execution from the registry.
 */
function perSubscriberHooks(
  { logger, metrics, writer }: { logger: Logger; metrics: Metrics; writer: SocketWriter },
  args: ExecutionArgs,
  forget: () => void,
): SharedSubscriptionHooks {
  return {
    writer,
    // One event span per shared result (not per member), a child of the first member's operation span.
    serialise: (result) => {
      metrics.subscriptionExecutions.inc({ execution: 'shared' });
      return traceSubscriptionEvent(args, result.errors !== undefined, () => JSON.stringify(maskExecutionResult(result, logger)));
    },
    onResult: (delivered) => {
      if (delivered > 1) metrics.deliveredEvents.inc({ source: 'live' }, delivered - 1);
    },
    onMembership: ({ joined, others }) => {
      if (others === 0) return;
      if (joined) metrics.activeSubscriptions.inc();
      else metrics.activeSubscriptions.dec();
    },
    onEnded: ({ reason, receiving }) => {
      forget();
      if (reason === 'completed' && receiving > 1) metrics.subscriptionsEndedEarly.inc(receiving - 1);
    },
    onReturnError: (error) => logger.debug({ err: error }, 'ending a shared subscription source failed'),
  };
}

/** The individual execution's results, counted as they are pulled; return() reaches the source at once. */
function countedAlone(result: SubscribeResult, metrics: Metrics): SubscribeResult {
  if (!(Symbol.asyncIterator in result)) return result;
  const source = result;
  const counted: AsyncIterableIterator<ExecutionResult> = {
    next: async () => {
      const step = await source.next();
      if (!step.done) metrics.subscriptionExecutions.inc({ execution: 'individual' });
      return step;
    },
    return: async (value?: unknown) => (await source.return?.(value)) ?? { done: true, value: undefined },
    throw: async (error?: unknown) => (await source.throw?.(error)) ?? { done: true, value: undefined },
    [Symbol.asyncIterator]: () => counted,
  };
  return counted;
}
