/**
 * Rewrites the flag tables of the docs from the program (src/cli/flag-docs.ts says how a table is
 * marked). `npm run docs:flags` after changing a command's flags; test/docs-flags.test.ts fails
 * until then.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderFlagBlocks } from '../src/cli/flag-docs.js';
import { buildProgram } from '../src/cli/program.js';

const program = await buildProgram();
const docs = readdirSync('docs', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
for (const f of docs) {
  const path = join('docs', f);
  const before = readFileSync(path, 'utf8');
  const after = renderFlagBlocks(before, program);
  if (after !== before) {
    writeFileSync(path, after);
    console.log(`rewrote the flag tables of ${path}`);
  }
}
