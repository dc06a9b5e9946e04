import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** every .ts file under dir */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * the project files a source imports or re-exports, type-only imports included: a circle closed
 * by a type import still means neither file can be read without the other
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/g))
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  for (const m of text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g))
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  return out;
}

/** the import circles of a graph, each as the files around it (depth-first search, one per back edge) */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const found: string[][] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    path.push(f);
    for (const g of graph.get(f) ?? []) {
      if (!graph.has(g)) continue;
      if (state.get(g) === 'open') found.push(path.slice(path.indexOf(g)));
      else if (!state.has(g)) visit(g);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('imports under src/', () => {
  const files = sources(SRC);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('resolve to files that exist', () => {
    const missing = [...graph].flatMap(([f, deps]) =>
      deps.filter((d) => !graph.has(d)).map((d) => `${relative(SRC, f)} -> ${relative(SRC, d)}`),
    );
    expect(missing).toEqual([]);
  });

  it('form no circle (type-only imports included)', () => {
    const found = circles(graph).map((c) => [...c, c[0]!].map((f) => relative(SRC, f)).join(' -> '));
    expect(found).toEqual([]);
  });

  it('are seen by this test: a circle made up here is found', () => {
    const made = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(made)).toEqual([['a', 'b', 'c']]);
    expect(graph.get(join(SRC, 'nn/model.ts'))).toContain(join(SRC, 'nn/ops.ts'));
  });
});

/**
 * Which top folders of src/ each folder may import from: the layers run one way, so a library
 * (the Tinker client, the model) can be read and reused without what is built on it.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  util: ['util'],
  nn: ['nn', 'util'],
  tinker: ['tinker', 'util'],
  render: ['render', 'nn', 'envs', 'util'],
};

describe('layers under src/', () => {
  const files = sources(SRC);
  it.each(Object.entries(MAY_IMPORT))('%s imports only from the folders below it', (folder, allowed) => {
    const wrong = files
      .filter((f) => relative(SRC, f).split('/')[0] === folder)
      .flatMap((f) =>
        importsOf(f)
          .filter((d) => !allowed.includes(relative(SRC, d).split('/')[0]!))
          .map((d) => `${relative(SRC, f)} -> ${relative(SRC, d)}`),
      );
    expect(wrong).toEqual([]);
  });

  /**
   * Folders that play, sample, render or evaluate any suite reach a suite only through the episode
   * interface (envs/suite.ts), the registry of suites by name (envs/suites.ts), the tool shape
   * (envs/tools.ts) and the Python value model (envs/py/): not a suite's own folder under envs/, nor
   * bfcl/ (BFCL played and scored by seal's loops). server and train still name BFCL (issue 52);
   * they join this list as they stop.
   */
  it.each(['agent', 'policy', 'render', 'eval'])('%s names no suite', (folder) => {
    const suites = /^envs\/(?!suite\.ts$|suites\.ts$|tools\.ts$|py\/)|^bfcl\//;
    const wrong = files
      .filter((f) => relative(SRC, f).split('/')[0] === folder)
      .flatMap((f) =>
        importsOf(f)
          .filter((d) => suites.test(relative(SRC, d)))
          .map((d) => `${relative(SRC, f)} -> ${relative(SRC, d)}`),
      );
    expect(wrong).toEqual([]);
  });

  it('policy does not import the learners', () => {
    const wrong = files
      .filter((f) => relative(SRC, f).startsWith('policy/'))
      .flatMap((f) => importsOf(f).filter((d) => /^(learner|train|cli)\//.test(relative(SRC, d))));
    expect(wrong).toEqual([]);
  });
});
