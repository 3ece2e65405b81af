import { existsSync } from 'node:fs';
import { createApp, type App } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { startTracing } from './telemetry/sdk.ts';

/** The drain must finish within the contract's 10 seconds; past this the process leaves anyway. */
const EXIT_DEADLINE_MS = 9_500;

// The only reader of process.env: `.env` first (variables already set win), then validation.
if (existsSync('.env')) process.loadEnvFile('.env');

let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.logLevel);
// Before the app, so its first request is traced; the SDK reads the OTEL_* variables itself.
const tracing = await startTracing(process.env);
let app: App;
try {
  app = await createApp(config, { logger });
  await app.listen();
  logger.info({ tracing: tracing?.description ?? 'off' }, `tracing: ${tracing?.description ?? 'off (no OTEL_EXPORTER_OTLP_ENDPOINT set)'}`);
} catch (error) {
  logger.fatal({ err: error }, `bank subgraph could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const shutdown = (signal: NodeJS.Signals) => {
  logger.info({ signal }, 'draining: readiness is 503, finishing in-flight work');
  setTimeout(() => {
    logger.error('drain did not finish in time; exiting');
    process.exit(0);
  }, EXIT_DEADLINE_MS).unref();
  // Spans of the drained requests are flushed last, after the app has finished them.
  app.close().finally(() => tracing?.shutdown()).then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: error }, 'error while draining');
      process.exit(1);
    },
  );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
