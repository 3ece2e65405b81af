/**
 * `GET /sandbox/bank`: where the in-process sandbox bank's test console listens, so a tool that knows
 * only the subgraph's URL (`npm run simulate:transfer`) can make its transfers through the sandbox
 * bank, which then holds them for confirmation like the real one. A door only the sandbox opens: it
 * exists only while the in-process sandbox runs under the sandbox rules, never under the production rules.
 */
import type { FastifyInstance } from 'fastify';

export const SANDBOX_BANK_PATH = '/sandbox/bank';

/** What the route tells: the in-process sandbox bank's console. */
export interface SandboxBankSettings {
  collectionConsoleUrl: string;
}

/** Serves `GET /sandbox/bank` on `app` when `sandboxBank` is given; otherwise nothing (404). */
export function registerSandboxBankRoute(app: FastifyInstance, sandboxBank: SandboxBankSettings | undefined): void {
  if (sandboxBank === undefined) return;
  app.get(SANDBOX_BANK_PATH, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ collectionConsole: sandboxBank.collectionConsoleUrl }),
  );
}
