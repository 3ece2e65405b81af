import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// A user clones only this repository: README.md and docs/ must stand alone. Every relative link
// must land on a file (and heading) inside the repository, and nothing may point at the workspace
// around it.

const ROOT = resolve(import.meta.dirname, '..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

interface Link {
  line: number;
  target: string;
}

/** The text outside fenced code blocks, line by line (code lines blanked, so numbers stay right). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && opening) {
      fence = opening;
      return '';
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return '';
    }
    return line.replace(/`[^`]*`/g, '``');
  });
}

/** Inline links and images `[text](target)`, and reference definitions `[id]: target`. */
function linksIn(markdown: string): Link[] {
  const links: Link[] = [];
  proseLines(markdown).forEach((text, index) => {
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: index + 1, target: match[1]! });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text);
    if (definition) links.push({ line: index + 1, target: definition[1]! });
  });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file offers, numbered as GitHub numbers repeated headings. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLinesOfFile(path)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function proseLinesOfFile(path: string): string[] {
  // Headings are read before code spans are blanked, so `code` in a heading keeps its text.
  let fence: string | undefined;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => {
      const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && opening) {
        fence = opening;
        return false;
      }
      if (fence !== undefined) {
        if (line.trim().startsWith(fence)) fence = undefined;
        return false;
      }
      return true;
    });
}

/** What is wrong with one link of `file`, or undefined when it resolves inside the repository. */
function problemWith(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    return /^(https?|mailto):/i.test(target) ? undefined : 'uses a scheme other than http(s) or mailto';
  }
  if (target.startsWith('/') || isAbsolute(target)) return 'is an absolute path; use a relative one';
  const [pathPart = '', anchor] = target.split('#', 2);
  const resolved = pathPart === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(pathPart));
  const inside = relative(ROOT, resolved);
  if (inside.startsWith('..') || isAbsolute(inside)) return 'points outside the repository';
  if (!existsSync(resolved)) return `points at ${inside}, which does not exist`;
  if (anchor !== undefined && anchor !== '' && statSync(resolved).isFile() && resolved.endsWith('.md')) {
    if (!anchorsOf(resolved).has(anchor)) return `points at #${anchor}, which is no heading of ${inside}`;
  }
  return undefined;
}

describe('README.md and docs/ stand alone', () => {
  it('finds the documents to check', () => {
    expect(DOCS).toContain('README.md');
    expect(DOCS.length).toBeGreaterThan(1);
  });

  it.each(DOCS)('%s: every relative link resolves to a file and heading in the repository', (file) => {
    const problems = linksIn(readFileSync(join(ROOT, file), 'utf8')).flatMap(({ line, target }) => {
      const problem = problemWith(file, target);
      return problem === undefined ? [] : [`${file}:${line}: (${target}) ${problem}`];
    });
    expect(problems).toEqual([]);
  });

  it.each(DOCS)('%s: mentions nothing of the workspace outside the repository', (file) => {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const mentions = lines.flatMap((text, index) => (/\.\.\/shared\b|\/work\//.test(text) ? [`${file}:${index + 1}: ${text.trim()}`] : []));
    expect(mentions).toEqual([]);
  });
});

describe('the link checker itself', () => {
  it('reports a missing file, a missing heading and a path outside the repository', () => {
    expect(problemWith('README.md', 'docs/no-such-file.md')).toMatch(/does not exist/);
    expect(problemWith('README.md', 'docs/webhook.md#no-such-heading')).toMatch(/no heading/);
    expect(problemWith('docs/webhook.md', '../../shared/CONTRACT.md')).toMatch(/outside the repository/);
    expect(problemWith('README.md', '/etc/passwd')).toMatch(/absolute path/);
    expect(problemWith('README.md', 'file:///etc/passwd')).toMatch(/scheme/);
  });

  it('accepts existing files, headings and web links, and ignores links inside code', () => {
    expect(problemWith('docs/webhook.md', '../README.md#running-several-replicas')).toBeUndefined();
    expect(problemWith('README.md', 'https://example.com/x')).toBeUndefined();
    expect(linksIn('```\n[x](../shared/a.md)\n```\nsee `[y](missing.md)` and [z](b.md)')).toEqual([{ line: 4, target: 'b.md' }]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slug('GraphQL over HTTP: `/graphql`')).toBe('graphql-over-http-graphql');
    expect(slug('`BAD_USER_INPUT`')).toBe('bad_user_input');
    expect(slug("The sandbox's demo data")).toBe('the-sandboxs-demo-data');
  });
});
