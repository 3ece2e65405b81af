/**
 * What a failed ask of the bank says about the bank. The confirmer pauses only for the bank's own
 * trouble; a failure about the one transfer asked (the bank refused its id, or its answer about it
 * cannot be read) holds back nothing else, and a slow bank is asked less at once.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode, UpstreamError } from '../errors.ts';

/** `bank-trouble`: the bank cannot answer anyone now. `about-this-transfer`: this ask failed, the next may not. */
export type FailureKind = 'about-this-transfer' | 'bank-trouble';

/**
 * The contract's split: time-outs, 5xx, 429, 401 (and 408, the bank's own time-out), no connection
 * and an open circuit are the bank's trouble. Any other 4xx (403 included, as the contract says; a
 * 404 from ops 15/16 too: not a verdict, since only the documented not-found answer is one), an
 * error envelope and an unreadable answer concern the transfer asked, as does an id refused before
 * any call. A fault of ours is taken for trouble: pausing loses nothing.
 */
export function failureKind(error: unknown): FailureKind {
  if (error instanceof GraphQLError && !(error instanceof UpstreamError)) {
    return error.extensions.code === ErrorCode.BAD_USER_INPUT ? 'about-this-transfer' : 'bank-trouble';
  }
  if (!(error instanceof UpstreamError)) return 'bank-trouble';
  if (error.timedOut) return 'bank-trouble';
  const { status } = error;
  // No HTTP answer: refused, reset, unreachable, an open circuit, the service not configured.
  if (status === undefined) return error.code === 'UPSTREAM_UNAVAILABLE' ? 'bank-trouble' : 'about-this-transfer';
  return status === 401 || status === 408 || status === 429 || status >= 500 ? 'bank-trouble' : 'about-this-transfer';
}

/** Whether the bank asks to be asked less: a 429, a 503 or a time-out halves what is in flight. */
export function slowDown(error: unknown): boolean {
  return error instanceof UpstreamError && (error.timedOut || error.status === 429 || error.status === 503);
}
