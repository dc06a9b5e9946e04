/**
 * The docs' flag tables are the program's: every command with flags has its table in docs/, and
 * every table reads exactly what `seal CMD --help` says now (`npm run docs:flags` rewrites them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { blocksIn, commandsWithFlags, flagTable, renderFlagBlocks } from '../src/cli/flag-docs.js';
import { buildProgram } from '../src/cli/program.js';

const DOCS = join(import.meta.dirname, '..', 'docs');
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
  });
});
