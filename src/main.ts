import { existsSync } from 'node:fs';
import { createApp } from './app.ts';
import { loadConfig } from './config/index.ts';
import { closeOnSignal, exitOnConfigError, exitOnStartFailure, ignoreBrokenPipe } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { startTracing } from './telemetry/sdk.ts';

// The only reader of process.env: `.env` first (variables already set win), then validation.
if (existsSync('.env')) process.loadEnvFile('.env');
const config = exitOnConfigError(() => loadConfig(process.env));
// A reader of stdout or stderr that has gone (`npm start | head`) costs output, never the process.
// Opening process.stdout also makes a pipe non-blocking: a reader that stops reading then answers the
// logger's writes with EAGAIN instead of holding a thread that the exit would wait for.
for (const stream of [process.stdout, process.stderr]) stream.on('error', ignoreBrokenPipe);
// Readable lines for a person at a terminal; JSON lines for anything else (pipes, files, containers).
const logger = createLogger(config.logLevel, { pretty: process.stdout.isTTY === true });
// Before the app, so its first request is traced; the SDK reads the OTEL_* variables itself.
const tracing = await startTracing(process.env);
const app = await exitOnStartFailure(logger, () => createApp(config, { logger }));
await exitOnStartFailure(logger, () => app.listen(), { PORT: config.port, WEBHOOK_PORT: config.webhookPort });
logger.info({ tracing: tracing?.description ?? 'off' }, `tracing: ${tracing?.description ?? 'off (no OTEL_EXPORTER_OTLP_ENDPOINT set)'}`);
closeOnSignal({ app, tracing }, logger);
