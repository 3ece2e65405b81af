/**
 * What a failed ask of the bank says about the bank. The confirmer pauses only for the bank's own
 * trouble; a failure about the one transfer asked (the bank refused its id, or its answer about it
 * cannot be read) holds back nothing else, and a slow bank is asked less at once.
 */
import { UpstreamError } from '../errors.ts';

/** `bank-trouble`: the bank cannot answer anyone now. `about-this-transfer`: this ask failed, the next may not. */
export type FailureKind = 'about-this-transfer' | 'bank-trouble';

/**
 * The contract's split: time-outs, 5xx, 429, 401 (and 408, the bank's own time-out), no connection
 * and an open circuit are the bank's trouble. Any other 4xx (404 from ops 15/16 included: not a
 * verdict, since only the documented not-found answer is one), an error envelope and an unreadable
 * answer concern the transfer asked. So does what is no UpstreamError (an id refused before any call,
 * or a fault of ours with one record): nothing shows the bank is in trouble.
 */
export function failureKind(error: unknown): FailureKind {
  if (!(error instanceof UpstreamError)) return 'about-this-transfer';
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
