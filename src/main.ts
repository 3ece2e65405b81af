import { existsSync } from 'node:fs';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { closeOnSignal, exitOnConfigError, exitOnStartFailure } from './lifecycle.ts';
import { createLogger } from './logger.ts';

// The only reader of process.env: `.env` first (variables already set win), then validation.
if (existsSync('.env')) process.loadEnvFile('.env');
const config = exitOnConfigError(() => loadConfig(process.env));
const logger = createLogger(config.logLevel);
const app = await exitOnStartFailure(logger, () => createApp(config, { logger }));
await exitOnStartFailure(logger, () => app.listen());
closeOnSignal(app, logger);
