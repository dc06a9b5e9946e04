/**
 * `seal data pull bfcl`: download the pinned BFCL multi-turn files (and, with `agentic`, BFCL v4's
 * memory and web search files, manifests/bfcl-v4-agentic.json), check each against the
 * sha256 manifest, and write them into the cache. Files already present with the right sum are
 * kept; a failed file never replaces a good one (downloads land in a temp file first).
 *
 * The long-context constants live in the reference's `long_context.py` as Python literals; the
 * pull parses that module with the project's literal parser (never executes it) and writes the
 * constants as `derived/long_context_constants.json`, the form the loader reads.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../../util/files.js';
import {
  fetchPinned,
  type PinnedFetch,
  PullError,
  type PullReport,
  pullPinned,
} from '../../../util/pinned-files.js';
import { jsonDumps } from '../../py/format.js';
import { literalValue, parsePythonExpression } from '../../py/parse.js';
import { ELLIPSIS, type PyDict, PyTuple, type PyValue } from '../../py/values.js';
import { BFCL_AGENTIC_MANIFEST, BFCL_MANIFEST, type BfclManifest } from './locate.js';
import { LONG_CONTEXT_CONSTANTS_FILE, SPLIT_FILE } from './tasks.js';

export type { PullReport };

export const BASE_URL_ENV = 'SEAL_BFCL_BASE_URL';
export const DEFAULT_BASE_URL = 'https://raw.githubusercontent.com/ShishirPatil/gorilla';

export interface PullOptions {
  readonly dest: string;
  /** raw-file host; `${baseUrl}/${commit}/${repoPath}` */
  readonly baseUrl?: string;
  readonly manifest?: BfclManifest;
  /** also BFCL v4's agentic files (memory, web search; `seal data pull bfcl` does) */
  readonly agentic?: boolean;
  readonly log?: (line: string) => void;
  readonly fetchImpl?: typeof fetch;
  readonly timeoutMs?: number;
}

export async function pullBfcl(opts: PullOptions): Promise<PullReport> {
  const manifest = opts.manifest ?? BFCL_MANIFEST;
  const host: PinnedFetch = {
    baseUrl: opts.baseUrl ?? process.env[BASE_URL_ENV] ?? DEFAULT_BASE_URL,
    commit: manifest.commit,
    ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };
  const log = opts.log ?? (() => {});
  const pinned = [...manifest.files];
  if (opts.agentic) {
    if (BFCL_AGENTIC_MANIFEST.commit !== manifest.commit)
      throw new PullError('the agentic manifest pins another commit than the multi-turn one');
    pinned.push(...BFCL_AGENTIC_MANIFEST.files);
  }
  const files = pinned.map((f) => ({
    url: `${manifest.repoDataPath}/${f.path}`,
    target: f.path,
    sha256: f.sha256,
  }));
  const report = await pullPinned(host, opts.dest, files, log);

  const constantsTarget = join(opts.dest, LONG_CONTEXT_CONSTANTS_FILE);
  if (existsSync(constantsTarget)) report.alreadyPresent.push(LONG_CONTEXT_CONSTANTS_FILE);
  else {
    try {
      const { repoPath, sha256 } = manifest.longContextSource;
      const src = await fetchPinned(host, repoPath, sha256);
      writeAtomic(constantsTarget, longContextModuleToJson(new TextDecoder().decode(src)));
      report.downloaded.push(LONG_CONTEXT_CONSTANTS_FILE);
      log(`converted long_context.py -> ${LONG_CONTEXT_CONSTANTS_FILE}`);
    } catch (e) {
      report.failed.push({ path: LONG_CONTEXT_CONSTANTS_FILE, reason: (e as Error).message });
    }
  }

  const splitTarget = join(opts.dest, SPLIT_FILE);
  if (!existsSync(splitTarget)) {
    writeAtomic(
      splitTarget,
      readFileSync(new URL('../../../../manifests/seal_400_split.json', import.meta.url)),
    );
  }
  return report;
}

/**
 * Parse a module of `NAME = <literal>` assignments (the reference's long_context.py) into
 * `{NAME: value}` JSON, with Python's Ellipsis written as {"__python_ellipsis__": true}.
 */
export function longContextModuleToJson(source: string): string {
  const starts = [...source.matchAll(/^([A-Z_][A-Z0-9_]*)\s*=\s*/gm)];
  if (starts.length === 0) throw new PullError('long_context.py: no constants found');
  const out: PyDict = new Map();
  starts.forEach((m, i) => {
    const from = m.index! + m[0].length;
    const to = i + 1 < starts.length ? starts[i + 1]!.index! : source.length;
    const value = literalValue(parsePythonExpression(source.slice(from, to).trim()));
    if (value === undefined) throw new PullError(`long_context.py: ${m[1]} is not a plain literal`);
    out.set(m[1]!, withEllipsisMarkers(value));
  });
  return jsonDumps(out);
}

/** Ellipsis becomes the marker object; everything else is written by json.dumps rules (floats keep `.0`). */
function withEllipsisMarkers(v: PyValue): PyValue {
  if (v === ELLIPSIS) return new Map([['__python_ellipsis__', true]]);
  if (Array.isArray(v)) return v.map(withEllipsisMarkers);
  if (v instanceof PyTuple) return v.items.map(withEllipsisMarkers);
  if (v instanceof Map) return new Map([...v].map(([k, val]) => [k, withEllipsisMarkers(val)]));
  return v;
}
