import type { FastifyPluginAsync } from 'fastify';
import { basicValid } from './auth.ts';
import { sandboxCredentials } from './credentials.ts';
import { sandboxBillCategories, sandboxBills } from './data.ts';
import { areaErrorHandler, type SandboxDeps } from './http.ts';

/** The bill-payment area's failure bodies (not shown by the spec; a Java-style error object). */
function failure(status: number, message: string): { status: number; error: string; message: string } {
  const error = status === 401 ? 'Unauthorized' : status >= 500 ? 'Internal Server Error' : 'Bad Request';
  return { status, error, message };
}

/** Ops 6-7 under `{billing_url}` (`…/provipay/webapi`), behind HTTP Basic. */
export function billingRoutes(deps: SandboxDeps): FastifyPluginAsync {
  return async (scope) => {
    scope.setErrorHandler(areaErrorHandler(deps, (status) => failure(status, 'The request could not be processed')));
    scope.addHook('preHandler', async (request, reply) => {
      if (!basicValid(request, sandboxCredentials.billingUsername, sandboxCredentials.billingPassword)) {
        reply.header('www-authenticate', 'Basic realm="provipay"');
        return reply.code(401).send(failure(401, 'Full authentication is required to access this resource'));
      }
    });

    scope.get('/categories', async () => sandboxBillCategories.map((category) => ({ ...category })));

    scope.get<{ Params: { categoryId: string } }>('/bill/assigned/byCategoryId/:categoryId', async (request, reply) => {
      const { categoryId } = request.params;
      if (!/^-?\d{1,9}$/.test(categoryId)) {
        return reply.code(400).send(failure(400, 'categoryId must be an integer'));
      }
      // An unknown category has no bills assigned: an empty list, not an error.
      return sandboxBills.filter((bill) => bill.category_id === Number(categoryId)).map((bill) => ({ ...bill }));
    });
  };
}
