/**
 * The flag tables of the docs, made from the program itself, so a flag added, renamed or given a
 * new default cannot leave the docs behind. A doc holds a table between two markers:
 *
 *     <!-- flags: seal train -->
 *     | flag | meaning |
 *     ...
 *     <!-- /flags -->
 *
 * `<!-- flags: seal experiment minus seal train -->` leaves out the flags the second command has
 * too, in the same words (the doc says where those are). `npm run docs:flags` rewrites every
 * block; a test fails when one differs from what this makes.
 */
import type { Command, Help, Option } from 'commander';

/** the command at a path such as `seal checkpoints list`; undefined when there is none */
export function commandAt(program: Command, path: string): Command | undefined {
  const [root, ...rest] = path.trim().split(/\s+/);
  if (root !== program.name()) return undefined;
  let cmd: Command | undefined = program;
  for (const name of rest) cmd = cmd?.commands.find((c) => c.name() === name);
  return cmd;
}

/** every command with flags of its own, as paths (`seal data pull`), in the order help lists them */
export function commandsWithFlags(program: Command): string[] {
  const out: string[] = [];
  const walk = (cmd: Command, path: string) => {
    if (flagsOf(cmd).length > 0) out.push(path);
    for (const sub of cmd.commands) walk(sub, `${path} ${sub.name()}`);
  };
  walk(program, program.name());
  return out;
}

function flagsOf(cmd: Command): Option[] {
  return cmd
    .createHelp()
    .visibleOptions(cmd)
    .filter((o) => o.long !== '--help');
}

// a `|` inside a cell, even in a code span, would end the cell
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** the markdown table of `cmd`'s flags, as `seal CMD --help` words them, less those `minus` shares */
export function flagTable(cmd: Command, minus?: Command): string {
  const help: Help = cmd.createHelp();
  // a flag of both that says the same in both; one the first words its own way stays
  const shared = new Set(minus ? flagsOf(minus).map((o) => `${o.long}\n${o.description}`) : []);
  const rows = flagsOf(cmd)
    .filter((o) => !shared.has(`${o.long}\n${o.description}`))
    .map((o) => `| \`${cell(help.optionTerm(o))}\` | ${cell(help.optionDescription(o))} |`);
  return ['| flag | meaning |', '|---|---|', ...rows].join('\n');
}

const BLOCK = /<!-- flags: ([^>]*?) -->\n[\s\S]*?<!-- \/flags -->/g;

/** the paths a doc has flag tables of (`seal experiment minus seal train` names the first) */
export function blocksIn(doc: string): string[] {
  return [...doc.matchAll(BLOCK)].map((m) => m[1]!.split(' minus ')[0]!.trim());
}

/**
 * `doc` with every flag block made anew from `program`. A block naming a command that does not
 * exist is an error naming it, so a removed command cannot keep a table.
 */
export function renderFlagBlocks(doc: string, program: Command): string {
  return doc.replace(BLOCK, (_, spec: string) => {
    const [path, minusPath] = spec.split(' minus ').map((s) => s.trim());
    const cmd = commandAt(program, path!);
    const minus = minusPath === undefined ? undefined : commandAt(program, minusPath);
    if (!cmd || (minusPath !== undefined && !minus))
      throw new Error(`a flag table names "${spec}", which is not a command of ${program.name()}`);
    return `<!-- flags: ${spec} -->\n${flagTable(cmd, minus)}\n<!-- /flags -->`;
  });
}
