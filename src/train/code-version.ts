/**
 * Which code a training run (and each of its rounds) ran on: the package version, the git commit
 * when run from a checkout, and a hash of the sources that decide a rollout's reward and a score
 * (everything but the command line, the reports and the server). The hash tells apart two states
 * of the code a commit does not (an edit not committed yet, an installed package), and it keys the
 * cache of start evaluations: a change to a format, the tokenizer or an environment must not
 * reuse a score computed by the old code.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUSED } from '../nn/kernels/fma.js';
import type { RunManifest } from './record.js';

/**
 * The float32 arithmetic, part of the start evaluation's cache key: results differ at rounding
 * level between fused and separate multiply-add kernels, and between revisions of the kernels
 * (r2: decoding attention scores as training computes them, sampling weights in SIMD)
 */
export const KERNELS = `${FUSED ? 'wasm-simd-fma' : 'wasm-simd'}-r2`;

/** top-level source folders whose code never changes a reward or a score */
const NOT_SCORING = new Set(['cli', 'report', 'server']);

/**
 * sha256 (24 hex digits) over the paths and contents of the .js/.ts sources under `root`, the
 * folders in NOT_SCORING left out; the same tree gives the same hash on any machine.
 */
export function sourcesHash(root: string): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!(dir === root && NOT_SCORING.has(e.name))) walk(path);
      } else if (/\.(js|ts)$/.test(e.name) && !e.name.endsWith('.d.ts')) files.push(path);
    }
  };
  walk(root);
  const h = createHash('sha256');
  for (const f of files.map((p) => relative(root, p).split(sep).join('/')).sort())
    h.update(`${f}\0`)
      .update(readFileSync(join(root, f)))
      .update('\0');
  return h.digest('hex').slice(0, 24);
}

/** the folder of the code running now: dist/ when built, src/ under a TypeScript runner */
const CODE_ROOT = fileURLToPath(new URL('../', import.meta.url));

let cachedSources: string | undefined;
/** sourcesHash of the running code, computed once per process */
export const runningSources = (): string => {
  cachedSources ??= sourcesHash(CODE_ROOT);
  return cachedSources;
};

export type CodeVersion = RunManifest['code'];

/** the package's root folder (the one with package.json), from dist/train or src/train */
const PACKAGE_ROOT = new URL('../../', import.meta.url);

/** the version in package.json */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version: string })
    .version;
}

/**
 * The commit of a checkout, and whether src/, bin/ or package.json have uncommitted edits;
 * undefined for an installed package or without git. Only a checkout of seal itself counts: an
 * installed package inside someone else's repository is not that repository's commit.
 */
export function checkoutCommit(): { readonly git: string; readonly dirty: boolean } | undefined {
  if (!existsSync(new URL('.git', PACKAGE_ROOT))) return undefined;
  try {
    const gitOut = (...args: string[]) =>
      execFileSync('git', args, { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    const git = gitOut('rev-parse', 'HEAD');
    // A commit alone does not name the code when the sources were edited after it.
    const dirty = gitOut('status', '--porcelain', '--', 'src', 'bin', 'package.json') !== '';
    return { git, dirty };
  } catch {
    return undefined;
  }
}

export function codeVersion(trainingKernels: string): CodeVersion {
  const kernels = { kernels: KERNELS, ...(trainingKernels !== 'wasm' ? { trainingKernels } : {}) };
  const version = packageVersion();
  const sources = runningSources();
  const checkout = checkoutCommit();
  if (!checkout) return { version, sources, ...kernels };
  const { git, dirty } = checkout;
  return { version, git, ...(dirty ? { dirty } : {}), sources, ...kernels };
}

/** what names the code a round ran on, in its record: the code without the kernel labels */
export const roundCode = (c: CodeVersion): CodeVersion => ({
  version: c.version,
  ...(c.git !== undefined ? { git: c.git } : {}),
  ...(c.dirty ? { dirty: c.dirty } : {}),
  ...(c.sources !== undefined ? { sources: c.sources } : {}),
});

/** whether two code versions differ in anything that can change a result */
export function codeChanged(before: CodeVersion, now: CodeVersion): boolean {
  if (before.sources !== undefined && now.sources !== undefined) return before.sources !== now.sources;
  return before.version !== now.version || before.git !== now.git || !!before.dirty !== !!now.dirty;
}

export const describeCode = (c: CodeVersion): string =>
  [
    `seal ${c.version}`,
    ...(c.git ? [`commit ${c.git.slice(0, 12)}${c.dirty ? ' with uncommitted edits' : ''}`] : []),
    ...(c.sources ? [`sources ${c.sources.slice(0, 12)}`] : []),
  ].join(', ');

/**
 * The cache key of a start evaluation: the same base weights, suite, token limit and code give
 * the same (greedy) result.
 */
export function startEvalKey(parts: {
  readonly modelSha256: string;
  readonly suite: string;
  readonly maxTokens: number;
  readonly code: CodeVersion;
}): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        parts.modelSha256,
        parts.suite,
        parts.maxTokens,
        parts.code.version,
        parts.code.kernels,
        parts.code.sources ?? null,
        'greedy-compact',
      ]),
    )
    .digest('hex')
    .slice(0, 24);
}
