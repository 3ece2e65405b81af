import { subscribe, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Caller } from '../../auth/caller.ts';
import type { AuthContext } from '../../auth/enforce.ts';
import type { Metrics } from '../../metrics.ts';
import type { OperationTrace } from '../../telemetry/websocket.ts';
import { webSocketOperation, type ResultPresenter } from '../websocket-context.ts';
import { nextMessageTail } from './frames.ts';
import { sharedExecutionKey } from './shareable.ts';
import { SharedSubscription, type SharedSubscriptionHooks } from './shared-subscription.ts';

type SubscribeResult = AsyncIterableIterator<ExecutionResult> | ExecutionResult;

/** Shares subscription executions between the sockets of one graphql-ws server. */
export interface SubscriptionFanout {
  /** graphql-ws `subscribe`: joins a shared execution, or runs alone when the operation cannot share. */
  subscribe(args: ExecutionArgs): Promise<SubscribeResult>;
}

/**
 * One execution per distinct subscription (same text, operation name and variables), its results
 * written to every subscriber's socket as one pre-serialised message; replays (`after`) run alone,
 * as graphql-ws would run them. Metrics count subscribers, not executions, except
 * graphql_subscription_executions_total; a socket closed for falling behind counts as one early end.
 * A shared execution runs under a context of its own (`sharedContext()`), not under any member's:
 * its source's consumer is the execution, which never waits on a socket.
 */
export function createSubscriptionFanout(options: {
  metrics: Metrics;
  present: ResultPresenter;
  onReturnError(error: unknown): void;
  /** The context a shared execution runs under, for subscribers with `caller`'s grants. */
  sharedContext: (caller: Caller) => unknown;
  /** What decides every answer a caller can get: only callers with equal keys share an execution. */
  accessKey: (caller: Caller) => string;
}): SubscriptionFanout {
  const executions = new Map<string, Promise<SharedSubscription | ExecutionResult>>();

  const start = (key: string, args: ExecutionArgs, trace: OperationTrace | undefined): Promise<SharedSubscription | ExecutionResult> => {
    const forget = () => executions.get(key) === entry && executions.delete(key);
    const entry: Promise<SharedSubscription | ExecutionResult> = (async () => {
      try {
        const result = await subscribe({ ...args, contextValue: options.sharedContext(callerOf(args)) });
        if (Symbol.asyncIterator in result) return new SharedSubscription(result, perSubscriberHooks(options, trace, forget));
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
    async subscribe(args) {
      const operation = webSocketOperation(args);
      const operationKey = sharedExecutionKey(args, operation.request);
      if (operationKey === undefined) return countedAlone(await subscribe(args), options.metrics);
      // The same operation, for callers that may see exactly the same accounts with the same scopes.
      const key = `${options.accessKey(callerOf(args))}\n${operationKey}`;
      for (;;) {
        const execution = await (executions.get(key) ?? start(key, args, operation.trace));
        if (!(execution instanceof SharedSubscription)) return execution;
        // Undefined when it ended while this subscriber waited: start a fresh one.
        const member = execution.join(operation.connection.recipient(operation.id));
        if (member) return member;
      }
    },
  };
}

/** The caller of an operation: graphql-ws runs it with the context built for it (an AuthContext). */
function callerOf(args: ExecutionArgs): Caller {
  return (args.contextValue as AuthContext).caller;
}

/**
 * A shared execution's hooks: presenting, and metrics that stay per subscriber. The stream counts
 * its execution as one subscription, each result as one event and its early end as one; the members
 * beyond the first add the rest. `forget` drops the execution from the registry.
 */
function perSubscriberHooks(
  { metrics, present, onReturnError }: { metrics: Metrics; present: ResultPresenter; onReturnError(error: unknown): void },
  trace: OperationTrace | undefined,
  forget: () => void,
): SharedSubscriptionHooks {
  return {
    // Presented once per result (one event span, under the first member's operation), not per member.
    present: (result) => {
      metrics.subscriptionExecutions.inc({ execution: 'shared' });
      return nextMessageTail(present(trace, result));
    },
    onResult: (reached) => {
      if (reached > 1) metrics.subscriptionEvents.inc({ source: 'live' }, reached - 1);
    },
    onMembership: ({ joined, others }) => {
      if (others === 0) return;
      if (joined) metrics.activeSubscriptions.inc();
      else metrics.activeSubscriptions.dec();
    },
    onEnded: ({ reason, members }) => {
      forget();
      if (reason === 'completed' && members > 1) metrics.subscriptionsEndedEarly.inc(members - 1);
    },
    onReturnError,
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
