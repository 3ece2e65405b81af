import { getOperationAST, getVariableValues, Kind, visit, type ExecutionArgs } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';

/**
 * Arguments that give each subscriber a stream of its own: a replay position (`after`) means
 * "everything since my cursor", which a subscriber joining a running execution would not get.
 */
const REPLAY_ARGUMENTS = new Set(['after']);

/**
 * The key under which subscribers share one execution (`request`: what the client sent, the text
 * the execution arguments were built from), or undefined when this one must run alone:
 * not a subscription, variables that do not coerce (graphql-js will report them), or a replay
 * argument with a value. Equal keys mean the same text, operation and variables, so the same
 * execution. The fanout adds the callers' access key (their scopes and visible accounts), so only
callers who would get the same answers share it; its context holds no identity.
 */
export function sharedExecutionKey(args: ExecutionArgs, request: SubscribePayload): string | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'subscription') return undefined;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  if (coerced.errors) return undefined;
  const variables = coerced.coerced;

  let replays = false;
  visit(args.document, {
    Argument(node) {
      if (!REPLAY_ARGUMENTS.has(node.name.value)) return;
      if (node.value.kind === Kind.NULL) return;
      if (node.value.kind === Kind.VARIABLE && variables[node.value.name.value] == null) return;
      replays = true;
    },
  });
  if (replays) return undefined;
  return JSON.stringify([request.operationName ?? null, request.query, canonical(request.variables ?? {})]);
}

/** The value with object keys sorted at every depth, so `{a, b}` and `{b, a}` print alike. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, inner]) => [key, canonical(inner)]));
}
