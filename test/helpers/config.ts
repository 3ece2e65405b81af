import { ConfigError, loadConfig } from '../../src/config/index.ts';

/** Every problem `loadConfig` reports for `env`, or none. */
export function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
