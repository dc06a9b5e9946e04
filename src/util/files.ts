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
import { UserError } from './errors.js';

/** A file or folder that cannot be read or written for a reason the user can fix. */
export class FileAccessError extends UserError {}

/** errno codes that are the user's to fix (a path that is a folder, permissions, a full disk) */
const USER_FS_CODES = new Set([
  'EISDIR',
  'ENOTDIR',
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'EDQUOT',
  'EEXIST',
  'ENOENT',
  'ENAMETOOLONG',
]);

/**
 * `e` as a FileAccessError saying what could not be done to `path` and why, when it is an fs
 * error of the kinds above; anything else unchanged.
 */
export function fileAccessError(e: unknown, action: 'read' | 'write', path: string): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code !== 'string' || !USER_FS_CODES.has(code)) return e;
  const why: Record<string, string> = {
    EISDIR: 'it is a folder',
    ENOTDIR: 'a part of the path is a file, not a folder',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'the file system is read-only',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    EEXIST: 'a file is in the way of a folder',
    ENOENT: 'it does not exist',
    ENAMETOOLONG: 'the name is too long',
  };
  return new FileAccessError(`cannot ${action} ${path}: ${why[code]}.`);
}

/** Write `data` to `path` so that a reader sees the old file or the new one, never a part. */
export function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    try {
      writeFileSync(tmp, data);
      renameSync(tmp, path);
    } finally {
      // after a successful rename there is nothing left to remove; after a failure nothing of
      // this write stays behind
      rmSync(tmp, { force: true, recursive: false });
    }
  } catch (e) {
    throw fileAccessError(e, 'write', path);
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
