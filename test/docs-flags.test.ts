/**
 * The docs' flag tables are the program's: every command with flags has its table in docs/, and
 * every table reads exactly what `seal CMD --help` says now (`npm run docs:flags` rewrites them).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { blocksIn, commandAt, commandsWithFlags, flagTable, renderFlagBlocks } from '../src/cli/flag-docs.js';
import { buildProgram } from '../src/cli/program.js';

const ROOT = join(import.meta.dirname, '..');
const DOCS = join(ROOT, 'docs');
const docs = readdirSync(DOCS, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ name: `docs/${f}`, text: readFileSync(join(DOCS, f), 'utf8') }));

const program = await buildProgram();

describe('the flag tables of the docs', () => {
  it('has a table for every command that takes flags', () => {
    const documented = new Set(docs.flatMap((d) => blocksIn(d.text)));
    const commands = commandsWithFlags(program);
    expect(commands).toContain('seal train');
    expect(commands).toContain('seal checkpoints download');
    expect(commands.filter((c) => !documented.has(c))).toEqual([]);
  });

  it.each(docs.filter((d) => blocksIn(d.text).length > 0))(
    '$name reads what --help says (else: npm run docs:flags)',
    ({ text }) => {
      expect(renderFlagBlocks(text, program)).toBe(text);
    },
  );

  it('lists the Tinker flags of seal train among them', () => {
    const train = docs.find((d) => d.name === 'docs/commands/train.md')!.text;
    for (const flag of ['--learner', '--dry-run', '--base-model', '--tokenizer', '--max-steps-off-policy'])
      expect(train).toContain(`| \`${flag}`);
    expect(train).toMatch(/\| `--price-prefill <x>` \|/);
  });
});

describe('flagTable', () => {
  const cmd = (name: string) => new Command(name);

  it('writes one row per flag as help words it, a | in a cell escaped', () => {
    const c = cmd('x').option('--mode <a|b>', 'which mode', 'a').option('--quiet', 'no progress lines');
    expect(flagTable(c)).toBe(
      [
        '| flag | meaning |',
        '|---|---|',
        '| `--mode <a\\|b>` | which mode (default: "a") |',
        '| `--quiet` | no progress lines |',
      ].join('\n'),
    );
  });

  it('less another command leaves out only the flags it words the same', () => {
    const a = cmd('a').option('--out <dir>', 'experiment folder').option('--seed <n>', 'the seed');
    const b = cmd('b').option('--out <dir>', 'run folder').option('--seed <n>', 'the seed');
    expect(flagTable(a, b)).toBe(
      ['| flag | meaning |', '|---|---|', '| `--out <dir>` | experiment folder |'].join('\n'),
    );
  });

  it('words --data-dir the same in every command that has it', () => {
    const helps = new Map<string, string>();
    const walk = (cmd: Command, path: string): void => {
      for (const o of cmd.options)
        if (o.long === '--data-dir') helps.set(path, `${o.flags}: ${o.description}`);
      for (const sub of cmd.commands) walk(sub, `${path} ${sub.name()}`);
    };
    walk(program, 'seal');
    expect([...helps.keys()].sort()).toEqual(
      ['seal eval', 'seal experiment', 'seal serve', 'seal train', 'seal verify'].sort(),
    );
    expect(new Set(helps.values()).size, [...helps].join('\n')).toBe(1);
  });

  it('refuses a block naming a command there is not', () => {
    expect(() => renderFlagBlocks('<!-- flags: seal nope -->\n<!-- /flags -->', program)).toThrow(
      /"seal nope", which is not a command of seal/,
    );
    // nor one less a command there is not, nor one of another program
    expect(() =>
      renderFlagBlocks('<!-- flags: seal experiment minus seal nope -->\n<!-- /flags -->', program),
    ).toThrow(/"seal experiment minus seal nope", which is not a command of seal/);
    expect(() => renderFlagBlocks('<!-- flags: git train -->\n<!-- /flags -->', program)).toThrow(
      /"git train", which is not a command of seal/,
    );
  });

  it('prints each default as the program holds it, and every flag of the command', () => {
    const eval_ = commandAt(program, 'seal eval')!;
    const table = flagTable(eval_).split('\n');
    expect(table.slice(2)).toHaveLength(eval_.options.length);
    expect(table).toContain('| `--concurrency <n>` | tasks in flight at once (default 8) |');
    expect(table).toContain(
      '| `--split <split>` | test, train, dev (mini), all, or comma-separated task ids (tau2: every task is test; ids as retail/0) (default test) |',
    );
  });
});

describe('npm run docs:flags', () => {
  const run = promisify(execFile);

  it('rewrites a stale table in any doc under docs/, and leaves the others alone', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'seal-docs-flags-'));
    mkdirSync(join(scratch, 'docs', 'commands'), { recursive: true });
    const stale = [
      '# verify',
      '',
      '<!-- flags: seal verify -->',
      '| flag | meaning |',
      '|---|---|',
      '| `--gone` | a flag since removed |',
      '<!-- /flags -->',
      '',
      'after',
      '',
    ].join('\n');
    const current = readFileSync(join(DOCS, 'commands', 'eval.md'), 'utf8');
    writeFileSync(join(scratch, 'docs', 'commands', 'verify.md'), stale);
    writeFileSync(join(scratch, 'docs', 'eval.md'), current);
    writeFileSync(join(scratch, 'docs', 'notes.txt'), '<!-- flags: seal verify -->\n<!-- /flags -->\n');
    const r = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'scripts', 'docs-flags.ts')], {
      cwd: scratch,
    });
    expect(r.stdout.trim().split('\n')).toEqual([
      `rewrote the flag tables of ${join('docs', 'commands', 'verify.md')}`,
    ]);
    const rewritten = readFileSync(join(scratch, 'docs', 'commands', 'verify.md'), 'utf8');
    expect(rewritten).toBe(renderFlagBlocks(stale, program));
    expect(rewritten).not.toContain('--gone');
    expect(rewritten).toContain('| `--results <file>` |');
    expect(rewritten.endsWith('<!-- /flags -->\n\nafter\n')).toBe(true);
    expect(readFileSync(join(scratch, 'docs', 'eval.md'), 'utf8')).toBe(current);
    expect(readFileSync(join(scratch, 'docs', 'notes.txt'), 'utf8')).toBe(
      '<!-- flags: seal verify -->\n<!-- /flags -->\n',
    );
  });
});
