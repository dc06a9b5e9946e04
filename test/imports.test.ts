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
