/**
 * Files a killed process never leaves half-written: whole files are written to a temporary name
 * beside the target and renamed over it (a rename within a directory is atomic), and append-only
 * JSON-lines logs tolerate the one torn line a kill can leave at their end.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';

/** Write `data` to `path` so that a reader sees the old file or the new one, never a part. */
export function writeAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export const writeJsonAtomic = (path: string, value: unknown): void =>
  writeAtomic(path, `${JSON.stringify(value, null, 2)}\n`);

export function writeJsonLines(path: string, rows: readonly unknown[]): void {
  writeAtomic(path, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
}

/** Append one row; a crash mid-write leaves at most a torn last line, which `readJsonLines` drops. */
export function appendJsonLine(path: string, row: unknown): void {
  appendFileSync(path, `${JSON.stringify(row)}\n`);
}

export interface JsonLines<T> {
  readonly rows: T[];
  /** lines that did not parse or did not pass `accept` (a torn tail after a kill, usually) */
  readonly dropped: number;
}

/**
 * The rows of a JSON-lines file (none when it does not exist). Lines that do not parse, or that
 * `accept` refuses, are dropped and counted; with `repair`, the file is rewritten without them so
 * that later appends do not follow a torn line.
 */
export function readJsonLines<T>(
  path: string,
  accept: (row: unknown) => row is T = (r): r is T => r !== undefined,
  opts: { readonly repair?: boolean } = {},
): JsonLines<T> {
  if (!existsSync(path)) return { rows: [], dropped: 0 };
  const rows: T[] = [];
  let dropped = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      dropped++;
      continue;
    }
    if (accept(row)) rows.push(row);
    else dropped++;
  }
  if (dropped > 0 && opts.repair) writeJsonLines(path, rows);
  return { rows, dropped };
}
