// One collection-notification delivery (op 14), whatever carried it: the checks in the contract's
// order (source address, signature, body, duplicate, storage) and the reply code they come to.
import { isUtf8 } from 'node:buffer';
import { createIpMatcher, type IpRange } from '../ip-ranges.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { PENDING, UNCHECKED, type NewQuarantinedDelivery } from '../domain/index.ts';
import { UnstorableNotificationError } from '../store/batch.ts';
import type { NotificationStore } from '../store/types.ts';
import { recordWebhookReply, traceStoreWrite } from '../telemetry/webhook.ts';
import type { Confirmer } from './confirmation.ts';
import type { NotificationFeed } from './notification-feed.ts';
import { parseNotification, readNotificationBody } from './notification.ts';
import type { QuarantineKeeper } from './quarantine.ts';
import { expectedSignature, verifySignature, type WebhookCredentials } from './signature.ts';

export const RESPONSE_MESSAGES = {
  '00': 'success',
  '01': 'duplicate transaction',
  '02': 'rejected transaction',
  '03': 'the service failure, retry',
} as const;
export type ResponseCode = keyof typeof RESPONSE_MESSAGES;

export interface DeliveryDeps {
  credentials: WebhookCredentials;
  /** `WEBHOOK_ALLOWED_IPS`: deliveries from elsewhere get `02`; `undefined` accepts any source. */
  allowedSources?: readonly IpRange[] | undefined;
  timezone: string;
  store: NotificationStore;
  /** This replica's follower of the log: told of each commit, it wakes every replica's. */
  notificationFeed: Pick<NotificationFeed, 'announce'>;
  /** Where what is refused for its content, or is a conflict, is kept before its reply is sent. */
  quarantine: Pick<QuarantineKeeper, 'keep' | 'checkDuplicate'>;
  /**
   * This replica's confirmer: with one, each notification is stored PENDING and the confirmer told
   * after its `00` (it asks the bank in the background); without (confirmation off), UNCHECKED.
   */
  confirmer?: Pick<Confirmer, 'wake'> | undefined;
  metrics: Metrics;
  logger: Logger;
}

/** What a delivery's headers say: who sent it and how it is signed. */
export interface DeliveryHeaders {
  clientId: string | undefined;
  signature: string | undefined;
  /** The client's address (through the proxies TRUST_PROXY names). */
  sourceAddress: string;
}

/** The reply code, our reason for it (a metric label), the sessionId to echo, and what to log with it. */
export interface Verdict {
  code: ResponseCode;
  reason: string;
  sessionId: string;
  details: Record<string, unknown>;
}

/** A body read whole: its bytes (what the quarantine keeps) and their text. */
export interface DeliveryBody {
  bytes: Uint8Array;
  text: string;
}

/** The `02` for a delivery refused on its headers, and whether its body is read to echo its sessionId. */
export interface Refusal extends Verdict {
  /**
   * A refused signature: the body is read within its limit only for the sessionId the reply echoes,
   * never parsed further or stored. A refused source: the body is never read (sessionId `''`).
   */
  echoesBody: boolean;
}

/** Decides deliveries in two steps, so that the body is parsed only for a sender the headers admit. */
export interface DeliveryHandler {
  /** The refusal of a delivery on its headers alone (source address, then signature), or undefined when its body is to be read. */
  admit(headers: DeliveryHeaders): Refusal | undefined;
  /**
   * The verdict on an admitted delivery's body: refused (`02`), already stored (`01`), stored (`00`);
   * a `02` or a conflicting `01` only once the delivery is kept in the quarantine, else `03`.
   */
  decide(body: DeliveryBody): Promise<Verdict>;
  /**
   * The `02` for an admitted delivery whose body passed the size limit, once what was read of it
   * (none when the declared length was over) is kept, since the bank will not send it again; else `03`.
   */
  refuseTooLarge(read: Uint8Array): Promise<Verdict>;
}

/**
 * Makes the handler that decides each delivery. The bank trusts the reply code: `00` means we own
 * the transfer, so it comes only after the notification is durably stored; `03` stores nothing, so
 * the bank's retry can succeed.
 */
export function createDeliveryHandler(deps: DeliveryDeps): DeliveryHandler {
  const expected = expectedSignature(deps.credentials);
  const allowed = deps.allowedSources === undefined ? () => true : createIpMatcher(deps.allowedSources);
  // Exported from the start, so the first match counts as an increase and "previous stays at 0" is visible.
  deps.metrics.webhookSignatureMatches.inc({ secret: 'current' }, 0);
  if (expected.previousSignature) deps.metrics.webhookSignatureMatches.inc({ secret: 'previous' }, 0);
  const refused = (reason: string, echoesBody: boolean, details: Record<string, unknown> = {}): Refusal => ({
    code: '02',
    reason,
    sessionId: '',
    details,
    echoesBody,
  });

  return {
    admit(headers) {
      // The signature is the same on every delivery, so it proves little once seen: where it comes
      // from is checked first. The address is operational data, logged to find a misconfiguration.
      if (!allowed(headers.sourceAddress)) return refused('source_not_allowed', false, { sourceAddress: headers.sourceAddress });
      const signedWith = verifySignature(headers, expected);
      // The bank's rules echo the sessionId whatever the reply, so a signed-looking sender's body is read for it.
      if (signedWith === undefined) return refused('bad_signature', true);
      // Tells the operator when the bank has stopped signing with the previous secret of a rotation.
      deps.metrics.webhookSignatureMatches.inc({ secret: signedWith });
      return undefined;
    },
    async decide({ bytes, text }) {
      const receivedAt = new Date();
      const body = readNotificationBody(text);
      const verdict = (code: ResponseCode, reason: string, details: Record<string, unknown> = {}): Verdict => ({
        code,
        reason,
        sessionId: body.sessionId,
        details,
      });
      // A refusal is answered 02 only once it is kept, with the ids the body holds, read as far as they can be.
      const refused = async (
        kind: 'REJECTED' | 'UNSTORABLE',
        reason: string,
        detail: string | null,
        details: Record<string, unknown> = {},
      ) => {
        const kept = await deps.quarantine.keep({
          kind,
          reason,
          detail,
          responseCode: '02',
          receivedAt: receivedAt.toISOString(),
          ...idsOf(body.fields),
          rawBody: bytes,
        });
        return kept ? verdict('02', reason, details) : verdict('03', NOT_KEPT, { refusedFor: reason, ...details });
      };
      const parsed = parseNotification(body, { timezone: deps.timezone, receivedAt });
      if (!parsed.ok) return refused('REJECTED', parsed.reason, parsed.detail ?? null);
      // The text gives back the bytes of nearly every body (well-formed UTF-8): only where it cannot
      // are the bytes stored beside it, so the 00 path writes nothing more for them.
      const confirmation = deps.confirmer ? PENDING : UNCHECKED;
      const notification = isUtf8(bytes)
        ? { ...parsed.notification, confirmation }
        : { ...parsed.notification, confirmation, rawBodyBytes: bytes };
      const { settlementId } = notification;

      const started = performance.now();
      let result;
      try {
        result = await traceStoreWrite(deps.store.kind, () => deps.store.insert(notification));
      } catch (error) {
        deps.metrics.webhookStoreDuration.observe({ outcome: 'error' }, (performance.now() - started) / 1000);
        // Refused by the store for what it holds, written alone: no retry can store it, so 02, never 03.
        if (error instanceof UnstorableNotificationError) {
          return refused('UNSTORABLE', 'store_refused_row', messageOf(error.cause), { settlementId, err: error });
        }
        return verdict('03', 'store_failure', { settlementId, err: error });
      }
      deps.metrics.webhookStoreDuration.observe({ outcome: result.status }, (performance.now() - started) / 1000);
      if (result.status === 'duplicate') {
        // An honest retry stores nothing; a conflict is answered 01 only once it is kept.
        const duplicate = await deps.quarantine.checkDuplicate(notification, bytes);
        return duplicate === 'not-kept'
          ? verdict('03', NOT_KEPT, { refusedFor: 'conflicting_duplicate', settlementId })
          : verdict('01', 'duplicate', { settlementId });
      }

      // Stored: the transfer is ours whatever happens next. Every replica's notification feed is woken (one
      // pub/sub message for many commits); if that message is lost, their safety-net timer reads it.
      deps.notificationFeed.announce(result.notification.position, result.settled);
      // Asked of the bank in the background, from the row just committed: the reply never waits for it.
      deps.confirmer?.wake(performance.now() - started);
      return verdict('00', 'accepted', { settlementId });
    },
    async refuseTooLarge(read) {
      const receivedAt = new Date().toISOString();
      const detail =
        read.byteLength === 0
          ? 'its declared length passed the size limit: none of it was read'
          : `it passed the size limit: its first ${read.byteLength} bytes are kept`;
      const delivery: NewQuarantinedDelivery = {
        kind: 'REJECTED',
        reason: 'body_too_large',
        detail,
        responseCode: '02',
        receivedAt,
        ...idsOf(undefined),
        rawBody: read,
      };
      const kept = await deps.quarantine.keep(delivery);
      return kept
        ? { code: '02', reason: 'body_too_large', sessionId: '', details: {} }
        : { code: '03', reason: NOT_KEPT, sessionId: '', details: { refusedFor: 'body_too_large' } };
    },
  };
}

/** The ids a body holds where they can be read: text, else null (the raw body keeps them whole; the store cuts them). */
function idsOf(fields: Record<string, unknown> | undefined): Pick<NewQuarantinedDelivery, 'sessionId' | 'settlementId' | 'accountNumber'> {
  const id = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  return { sessionId: id(fields?.sessionId), settlementId: id(fields?.settlementId), accountNumber: id(fields?.accountNumber) };
}

/** The reason of a 03 for a delivery to quarantine that could not be kept (the keeper logged why). */
const NOT_KEPT = 'quarantine_not_kept';

/** The store's own message, kept beside an UNSTORABLE delivery, cut to a readable length. */
function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 1_000 ? `${message.slice(0, 1_000)}…` : message;
}

/** Counts, traces and logs a verdict, as every reply of the webhook is. */
export function recordVerdict(deps: Pick<DeliveryDeps, 'metrics' | 'logger'>, { code, reason, sessionId, details }: Verdict): void {
  deps.metrics.webhookReplies.inc({ response_code: code, reason });
  recordWebhookReply(code, reason, typeof details.settlementId === 'string' ? details.settlementId : undefined);
  const level = code === '03' ? 'error' : code === '02' ? 'warn' : 'info';
  // The line is built only when its level is logged: every delivery passes here.
  if (deps.logger.isLevelEnabled(level)) {
    deps.logger[level]({ responseCode: code, reason, sessionId, ...details }, `collection notification: ${RESPONSE_MESSAGES[code]}`);
  }
}

/** The reply in the bank's shape (op 14). */
export function replyBody(sessionId: string, code: ResponseCode) {
  return { requestSuccessful: true, sessionId, responseMessage: RESPONSE_MESSAGES[code], responseCode: code };
}
