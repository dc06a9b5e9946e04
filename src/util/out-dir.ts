/**
 * An output folder checked before any work starts: a run that would fail only when it first
 * writes, minutes or hours in, fails at once instead, with the reason. The folder is created one
 * level at a time from its nearest existing ancestor: Node's recursive mkdir never returns under
 * /proc, and a virtual file system (proc, sysfs, ...) is no place for a run anyway.
 */
import { accessSync, constants, mkdirSync, rmdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UserError } from './errors.js';
import { fileAccessError } from './files.js';

export class OutDirError extends UserError {}

/** statfs magic numbers of Linux file systems that hold no files of a user's (linux/magic.h) */
const SPECIAL_FS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x73636673, 'securityfs'],
  [0x6e736673, 'nsfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0xcafe4a11, 'bpf'],
  [0x19800202, 'mqueue'],
  [0x50495045, 'pipefs'],
  [0x534f434b, 'sockfs'],
]);

type Kind = 'folder' | 'file' | 'other' | 'missing';

function kindOf(path: string): Kind {
  try {
    const s = statSync(path);
    return s.isDirectory() ? 'folder' : s.isFile() ? 'file' : 'other';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENOTDIR: a file further up, which the walk up the path reaches and names
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw fileAccessError(e, 'read', path);
  }
}

/**
 * Makes `dir` an existing, writable folder on an ordinary file system, or throws an OutDirError
 * naming what is wrong (`flag` names where the path came from, e.g. `--out`). Returns the folders
 * it created, outermost first, so that a caller that gives up can remove them again. With
 * `create: false` it only checks.
 */
export function prepareOutDir(dir: string, flag: string, opts: { readonly create?: boolean } = {}): string[] {
  const target = resolve(dir);
  const missing: string[] = [];
  let at = target;
  for (;;) {
    const kind = kindOf(at);
    if (kind === 'folder') break;
    if (kind === 'file')
      throw new OutDirError(
        at === target
          ? `${flag} ${dir} is a file; give a folder (it is created if missing).`
          : `${flag} ${dir}: ${at} is a file, not a folder; give a path under a folder.`,
      );
    if (kind === 'other')
      throw new OutDirError(`${flag} ${dir}: ${at} is not a folder (a device, pipe or socket).`);
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  let fsType: number | undefined;
  try {
    fsType = Number(statfsSync(at).type);
  } catch {
    // no statfs on this platform: the writes below still tell
  }
  const special = fsType === undefined ? undefined : SPECIAL_FS.get(fsType);
  if (special)
    throw new OutDirError(
      `${flag} ${dir} is on the ${special} file system (${at}), which holds no files; give a folder on a disk.`,
    );
  try {
    accessSync(at, constants.W_OK | constants.X_OK);
  } catch {
    throw new OutDirError(
      `${flag} ${dir}: cannot write in ${at} (permission denied); give a folder you can write.`,
    );
  }
  const created: string[] = [];
  if (opts.create === false) return created;
  for (const d of missing) {
    try {
      mkdirSync(d);
      created.push(d);
    } catch (e) {
      for (const c of created.reverse()) rmdirSync(c);
      const err = fileAccessError(e, 'write', d);
      throw err instanceof UserError ? new OutDirError(`${flag} ${dir}: ${err.message}`) : err;
    }
  }
  return created;
}
