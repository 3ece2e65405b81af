// The environment as each step of loadConfig reads it, and the small readers they share.

export type Env = Readonly<Record<string, string | undefined>>;

/** The environment as each step sees it: `''` reads as unset, and every problem goes to one list. */
export interface Source {
  read(name: string): string | undefined;
  problems: string[];
  /** What is accepted but opens a door on purpose (`WEBHOOK_ALLOWED_IPS=any`): logged at start. */
  warnings: string[];
  /** `NODE_ENV=production`. */
  production: boolean;
  /**
   * Why the production rules apply (`"UPSTREAM_MODE=live"`, `"NODE_ENV=production"`), for the problems
   * that name it; undefined under the sandbox rules, where the bank is the in-process sandbox outside
   * production: the one condition under which a default may open a door.
   */
  closedBy: string | undefined;
}

/** `env` as a Source: trimmed, `''` read as unset, problems gathered in one list. */
export function sourceOf(env: Env): Source {
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const production = read('NODE_ENV') === 'production';
  const mode = read('UPSTREAM_MODE') ?? 'sandbox';
  // Keyed on the bank first: a live bank gets the production rules whatever NODE_ENV says (staging,
  // unset, a typo), and so does a mode that is not "sandbox" at all (it is refused too).
  const closedBy = mode !== 'sandbox' ? `UPSTREAM_MODE=${mode}` : production ? 'NODE_ENV=production' : undefined;
  return { read, problems: [], warnings: [], production, closedBy };
}

/** Whether the sandbox rules apply: the bank is the in-process sandbox and NODE_ENV is not production. */
export function sandboxRules(source: Source): boolean {
  return source.closedBy === undefined;
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

/** `true` or `false` (any case), `fallback` when unset; a problem naming the variable otherwise. */
export function boolean(source: Source, name: string, fallback: boolean): boolean {
  const raw = source.read(name);
  if (raw === undefined) return fallback;
  if (/^(true|false)$/i.test(raw)) return raw.toLowerCase() === 'true';
  source.problems.push(`${name} must be true or false, got "${raw}"`);
  return fallback;
}
