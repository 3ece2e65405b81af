import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookCredentials } from '../config.ts';
import { createIpMatcher, type IpRange } from '../ip-ranges.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { NotificationStore } from '../store/types.ts';
import type { NotificationLog } from './notification-log.ts';
import { recordWebhookReply, traceStoreWrite, traceWebhookDelivery } from '../telemetry/webhook.ts';
import { parseNotification, readNotificationBody, readSessionId } from './notification.ts';
import { expectedSignature, verifySignature, type ExpectedSignature } from './signature.ts';

/** The webhook's paths: ours, and the one the bank's documentation shows under its test base. */
export const WEBHOOK_PATHS = ['/webhooks/collection', '/v1/webhook'] as const;
/** Bodies above this are refused with 413 before they are read whole. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

const MESSAGES = {
  '00': 'success',
  '01': 'duplicate transaction',
  '02': 'rejected transaction',
  '03': 'the service failure, retry',
} as const;
type ResponseCode = keyof typeof MESSAGES;

export interface WebhookDeps {
  credentials: WebhookCredentials;
  /** `WEBHOOK_ALLOWED_IPS`: deliveries from elsewhere get `02`; `undefined` accepts any source. */
  allowedSources?: readonly IpRange[] | undefined;
  timezone: string;
  store: NotificationStore;
  /** This replica's follower of the log: told of each commit, it wakes every replica's. */
  notificationLog: Pick<NotificationLog, 'announce'>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Registers the collection webhook (op 14). The bank trusts the reply code: `00` means we own the
 * transfer, so it is sent only after the notification is durably stored; `03` stores nothing, so
 * the bank's retry can succeed. Checks run in the contract's order: source address, signature,
 * body, duplicate, storage.
 */
export async function registerCollectionWebhook(app: FastifyInstance, deps: WebhookDeps): Promise<void> {
  const expected = expectedSignature(deps.credentials);
  const allowed = deps.allowedSources === undefined ? () => true : createIpMatcher(deps.allowedSources);
  // Exported as 0 from the start, so a replica's first delivery counts as an increase in PromQL.
  deps.metrics.webhookReplies.inc({ response_code: '00', reason: 'accepted' }, 0);
  await app.register(async (scope) => {
    // The raw body is kept verbatim, so every content type is read as text and parsed here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });
    // Failures before or outside the handler. Only an oversized body leaves with another status than
    // 200: a body that cannot be read is the bank's fault (02); anything else is ours (03, retry).
    scope.setErrorHandler((error: { statusCode?: number }, request, reply) => {
      const status = error.statusCode ?? 500;
      const [code, reason]: [ResponseCode, string] =
        status === 413 ? ['02', 'body_too_large'] : status < 500 ? ['02', 'unreadable_body'] : ['03', 'internal_error'];
      const sessionId = typeof request.body === 'string' ? readSessionId(request.body) : '';
      deps.metrics.webhookReplies.inc({ response_code: code, reason });
      request.log[code === '03' ? 'error' : 'warn']({ responseCode: code, reason, sessionId, err: error }, `collection notification: ${MESSAGES[code]}`);
      return reply.code(status === 413 ? 413 : 200).send(replyBody(sessionId, code));
    });
    for (const path of WEBHOOK_PATHS) {
      scope.post(path, { bodyLimit: WEBHOOK_BODY_LIMIT }, (request, reply) =>
        traceWebhookDelivery(request, path, () => handle(deps, { expected, allowed }, request, reply)),
      );
    }
  });
}

async function handle(
  deps: WebhookDeps,
  { expected, allowed }: { expected: ExpectedSignature; allowed: (address: string) => boolean },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const body = readNotificationBody(typeof request.body === 'string' ? request.body : '');
  const { sessionId } = body;
  const respond = (code: ResponseCode, reason: string, extra: Record<string, unknown> = {}) => {
    deps.metrics.webhookReplies.inc({ response_code: code, reason });
    recordWebhookReply(code, reason, typeof extra.settlementId === 'string' ? extra.settlementId : undefined);
    const level = code === '03' ? 'error' : code === '02' ? 'warn' : 'info';
    request.log[level]({ responseCode: code, reason, sessionId, ...extra }, `collection notification: ${MESSAGES[code]}`);
    return reply.code(200).send(replyBody(sessionId, code));
  };

  // The signature is the same on every delivery, so it proves little once seen: where it comes
  // from is checked first. The address is operational data, logged to find a misconfiguration.
  if (!allowed(request.ip)) return respond('02', 'source_not_allowed', { sourceAddress: request.ip });

  const signed = verifySignature(
    { clientId: header(request, 'client-id'), signature: header(request, 'x-auth-signature') },
    expected,
  );
  if (!signed) return respond('02', 'bad_signature');

  const parsed = parseNotification(body, { timezone: deps.timezone, receivedAt: new Date() });
  if (!parsed.ok) return respond('02', parsed.reason);
  const { settlementId } = parsed.notification;

  const started = performance.now();
  let result;
  try {
    result = await traceStoreWrite(deps.store.kind, () => deps.store.insert(parsed.notification));
  } catch (error) {
    deps.metrics.webhookStoreDuration.observe({ outcome: 'error' }, (performance.now() - started) / 1000);
    return respond('03', 'store_failure', { settlementId, err: error });
  }
  deps.metrics.webhookStoreDuration.observe({ outcome: result.status }, (performance.now() - started) / 1000);
  if (result.status === 'duplicate') return respond('01', 'duplicate', { settlementId });

  // Stored: the transfer is ours whatever happens next. Every replica's log follower is woken (one
  // pub/sub message per event-loop turn); if that message is lost, their safety-net timer reads it.
  deps.notificationLog.announce(result.notification.seq);
  return respond('00', 'accepted', { settlementId });
}

function replyBody(sessionId: string, code: ResponseCode) {
  return { requestSuccessful: true, sessionId, responseMessage: MESSAGES[code], responseCode: code };
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
