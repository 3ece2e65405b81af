// The environment as each step of loadConfig reads it, and the small readers they share.

export type Env = Readonly<Record<string, string | undefined>>;

/** The environment as each step sees it: `''` reads as unset, and every problem goes to one list. */
export interface Source {
  read(name: string): string | undefined;
  problems: string[];
  /** `NODE_ENV=production`: settings that default to demo values must be given. */
  production: boolean;
}

/** `env` as a Source: trimmed, `''` read as unset, problems gathered in one list. */
export function sourceOf(env: Env): Source {
  return {
    read(name) {
      const value = env[name]?.trim();
      return value === undefined || value === '' ? undefined : value;
    },
    problems: [],
    production: env.NODE_ENV?.trim() === 'production',
  };
}

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** A whole number in [min, max], `fallback` when unset; a problem naming the variable otherwise. */
export function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = source.read(name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    source.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  return value;
}

