import type { FastifyPluginAsync } from 'fastify';
import { nameEnquiry } from './account.ts';
import { postingCredentialsValid } from './auth.ts';
import { areaErrorHandler, bodyFields, stringField, type SandboxDeps } from './http.ts';

/** The posting endpoint's one failure body, for 400, 401 and 500 alike (spec, Errors). */
export const POSTING_FAILURE = { requestSuccessful: false, responseMessage: 'Operation failed', responseCode: '11' } as const;

/** Op 13 under `{posting_url}` (`…/postingrest`): name enquiry with credentials in the body. */
export function postingRoutes(deps: SandboxDeps): FastifyPluginAsync {
  return async (scope) => {
    scope.setErrorHandler(areaErrorHandler(deps, () => ({ ...POSTING_FAILURE })));

    scope.post('/GetNIPAccount', async (request, reply) => {
      const fields = bodyFields(request);
      if (fields === null) return reply.code(400).send({ ...POSTING_FAILURE });
      // Missing credentials are a refusal like wrong ones: a request with no key gets 401.
      if (!postingCredentialsValid(fields)) return reply.code(401).send({ ...POSTING_FAILURE });
      const accountNumber = stringField(fields, 'accountNumber');
      const beneficiaryBank = stringField(fields, 'beneficiaryBank');
      if (accountNumber === undefined || beneficiaryBank === undefined) {
        return reply.code(400).send({ ...POSTING_FAILURE });
      }
      return nameEnquiry(accountNumber, beneficiaryBank, deps.now());
    });
  };
}
