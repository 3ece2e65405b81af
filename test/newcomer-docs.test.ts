import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { startApp } from './helpers/app.ts';
import { capturingLogger } from './helpers/stores.ts';
import { TestIssuer, writeJwksFile } from './helpers/tokens.ts';

// What a newcomer reads first: .env.example, the configuration reference, the sandbox's live-mode
// rehearsal and the first log line must each say what is true.

const ROOT = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The headings of a Markdown file, as written. */
function headings(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((match) => match[1]!);
}

/** The text of the Markdown section under `heading`, up to the next heading of any level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const rest = markdown.slice(start + heading.length + 2);
  const next = rest.search(/^#{1,6}\s/m);
  return next === -1 ? rest : rest.slice(0, next);
}

describe('.env.example', () => {
  it('points only at README sections and documents that exist', () => {
    const example = read('.env.example');
    const readme = headings(read('README.md'));
    const sections = [...example.matchAll(/README's ([A-Z][\w ]*?)(?=[);,.]|$)/gm)].map((match) => match[1]!.trim());
    expect(sections.filter((name) => !readme.includes(name))).toEqual([]);
    const documents = [...example.matchAll(/\b(docs\/[\w-]+\.md)\b/g)].map((match) => match[1]!);
    expect(documents.length).toBeGreaterThan(0);
    expect(documents.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  it('names in its live-mode list every bank setting UPSTREAM_MODE=live alone is refused for', () => {
    let report = '';
    try {
      loadConfig({ UPSTREAM_MODE: 'live' });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      report = error.message;
    }
    const required = [...report.matchAll(/- (\w+) is required when UPSTREAM_MODE=live/g)].map((match) => match[1]!);
    expect(required).toContain('BANK_COLLECTION_URL');
    const liveMode = section(read('docs/configuration.md'), '## Sandbox mode and live mode');
    // The token settings are the production rules' own, listed in their table.
    const bankSettings = required.filter((name) => !name.startsWith('AUTH_'));
    expect(bankSettings.filter((name) => !liveMode.includes(`\`${name}\``))).toEqual([]);
  });
});

describe("docs/sandbox.md's live-mode rehearsal", () => {
  const rehearsal = section(read('docs/sandbox.md'), '## Rehearsing live mode against the sandbox');
  const commands = [...rehearsal.matchAll(/```sh\n([^]*?)```/g)].map((match) => match[1]!.replace(/\s*\\\n\s*/g, ' '));

  it('keeps the subgraph on this machine (HOST=127.0.0.1: the production rules bind 0.0.0.0)', () => {
    const start = commands
      .flatMap((block) => block.split('\n'))
      .find((line) => line.includes('UPSTREAM_MODE=live') && line.endsWith('npm start'));
    expect(start).toMatch(/^HOST=127\.0\.0\.1 /);
  });

  it("mints its tokens with npm run token -- --key, and checks them against that key's JWKS in a file", () => {
    const lines = commands.flatMap((block) => block.split('\n'));
    const jwks = lines.find((line) => line.includes('--jwks'));
    expect(jwks).toMatch(/npm run -s token -- --key (\S+) --kid (\S+) --jwks > (\S+)/);
    const [, key, kid, jwksFile] = /--key (\S+) --kid (\S+) --jwks > (\S+)/.exec(jwks!)!;
    const start = lines.find((line) => line.endsWith('npm start'))!;
    expect(start).toContain(`AUTH_JWKS_URL=file:${jwksFile}`);
    const issuer = /AUTH_ISSUER=(\S+)/.exec(start)![1];
    const audience = /AUTH_AUDIENCE=(\S+)/.exec(start)![1];
    expect(lines.find((line) => line.includes('TOKEN=$(npm run -s token'))).toContain(
      `--key ${key} --kid ${kid} --issuer ${issuer} --audience ${audience}`,
    );
  });
});

describe('the first log line', () => {
  it('says what is true of authorization when AUTH_JWKS_URL is set without AUTH_ISSUER (the sandbox rules allow it)', async () => {
    const { logger, lines } = capturingLogger();
    await startApp({ AUTH_JWKS_URL: writeJwksFile(await TestIssuer.create()) }, { logger });
    const line = await lines.first((text) => text.includes('"auth"'));
    const first = JSON.parse(line) as { msg: string; auth: string };
    expect(first.auth).toBe('jwt');
    expect(first.msg).toContain('authorization: JWT signed by a key of AUTH_JWKS_URL, any issuer (AUTH_ISSUER unset)');
    expect(first.msg).not.toContain('undefined');
  });
});
