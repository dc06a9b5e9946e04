/**
 * The README and docs/ as a reader meets them: every relative link opens a file that exists and
 * every `#anchor` names a heading there (GitHub's slug rule); every flag a `seal ...` example line
 * uses is one the real command's `--help` lists; and nothing a user reads (docs, README, comments
 * under src/, bin/, scripts/) sends them to the materials outside the repository.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, seal } from './support/cli.js';

function walk(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path, keep);
    return keep(path) ? [path] : [];
  });
}

const DOCS = [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs'), (f) => f.endsWith('.md'))];

/** text outside fenced code blocks, where links and headings mean what they say */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    let slug = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug);
    seen.set(slug, (n ?? -1) + 1);
    if (n !== undefined) slug = `${slug}-${n + 1}`;
    out.add(slug);
  }
  return out;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

describe('README and docs', () => {
  it('has a README a newcomer reads in minutes', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThan(250);
  });

  it("says in plain words what the README's terms mean before it uses them", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // the experiments' own words belong on their pages, not on the first screen
    for (const word of ['anchor', 'guideline', 'habit', 'pre-registered', 'training pool'])
      expect(readme.toLowerCase(), word).not.toContain(word);
    // each term the first screen needs is said where it first appears (in italics there)
    for (const term of ['strict', 'mini suite', 'groups with signal']) {
      const first = readme.indexOf(term);
      expect(first, term).toBeGreaterThan(-1);
      expect(readme.slice(first - 1, first + term.length + 1), term).toBe(`*${term}*`);
    }
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    let links = 0;
    for (const file of DOCS) {
      for (const m of prose(readFileSync(file, 'utf8')).matchAll(/\[[^\]]+\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        links++;
        const [path, anchor] = target.split('#');
        const resolved = path ? normalize(join(dirname(file), path)) : file;
        const where = `${relative(ROOT, file)} -> ${target}`;
        if (!exists(resolved)) broken.push(`${where}: no such file`);
        else if (anchor && !anchors(resolved).has(anchor)) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
    expect(links).toBeGreaterThan(50);
  });

  it('has no link without a target', () => {
    const empty = DOCS.flatMap((file) =>
      [...prose(readFileSync(file, 'utf8')).matchAll(/\[[^\]]*\]\(\s*\)/g)].map(
        (m) => `${relative(ROOT, file)}: ${m[0]}`,
      ),
    );
    expect(empty).toEqual([]);
  });

  it("quotes the default run's scores as docs/results.md states them", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const results = readFileSync(join(ROOT, 'docs', 'results.md'), 'utf8');
    const section = /^## The default run \(`npm start`\)\n([\s\S]*?)^## /m.exec(results)?.[1];
    expect(section, 'docs/results.md has a section "The default run (`npm start`)"').toBeDefined();
    const [, start, final] = /Start (\d+\.\d\d) -> final (\d+\.\d\d)/.exec(section!) ?? [];
    expect(start, 'the section says "Start X -> final Y"').toBeDefined();
    // the printed lines of the README's example, and its summary in words
    expect(readme).toContain(`start: average ${start}\n`);
    expect(readme).toContain(`final: average ${final}\n`);
    expect(readme).toContain(`strict test average: start ${start} -> final ${final}\n`);
    expect(readme).toMatch(
      new RegExp(`scores\\s+${start} on the strict mini test, the default run ends at ${final}\\b`),
    );
    expect(results).toMatch(
      new RegExp(
        `\\*\\*In short:\\*\\* the shipped base scores ${start}; the default run ends at ${final}\\b`,
      ),
    );
  });

  it('sends no reader outside the repository', () => {
    const sources = ['src', 'bin', 'scripts'].flatMap((d) =>
      walk(join(ROOT, d), (f) => /\.(ts|js)$/.test(f)),
    );
    const offending = [...DOCS, ...sources].filter((file) =>
      /\.\.\/shared|shared\/docs|method doc/.test(readFileSync(file, 'utf8')),
    );
    expect(offending.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('cites sections of docs/method.md that exist', () => {
    const method = readFileSync(join(ROOT, 'docs', 'method.md'), 'utf8');
    const sections = new Set([...method.matchAll(/^## (\d+)\. /gm)].map((m) => m[1]));
    const cited: string[] = [];
    for (const file of walk(join(ROOT, 'src'), (f) => f.endsWith('.ts'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(
        /docs\/method\.md,? sections? (\d+)(?: and (\d+))?/g,
      ))
        cited.push(...[m[1], m[2]].filter((s): s is string => s !== undefined));
    }
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((s) => !sections.has(s))).toEqual([]);
  });

  it('shows only flags the commands accept', async () => {
    const examples = new Map<string, Set<string>>();
    for (const file of DOCS) {
      for (const m of readFileSync(file, 'utf8').matchAll(
        /^\s*(?:node bin\/seal\.js|seal) (train|experiment|eval|verify|compare|report|serve|data|pretrain|checkpoints)\b((?: pull| list| ttl| delete| download| convert)?)(.*)$/gm,
      )) {
        const command = m[2] ? `${m[1]}${m[2]}` : m[1]!;
        const flags = examples.get(command) ?? new Set<string>();
        for (const f of m[3]!.split('#')[0]!.matchAll(/--[a-z][a-z-]*/g)) flags.add(f[0]);
        examples.set(command, flags);
      }
    }
    expect([...examples.keys()]).toEqual(
      expect.arrayContaining(['train', 'eval', 'verify', 'serve', 'pretrain']),
    );
    const unknown: string[] = [];
    for (const [command, flags] of examples) {
      const help = await seal([...command.split(' '), '--help']);
      expect(help.code, `seal ${command} --help`).toBe(0);
      for (const flag of flags) if (!help.stdout.includes(flag)) unknown.push(`seal ${command} ${flag}`);
    }
    expect(unknown).toEqual([]);
  });
});
