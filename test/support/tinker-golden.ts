/**
 * The Tinker wire golden cases: the copies in test/fixtures/tinker always, and the shared folder's
 * (`SEAL_SHARED_TINKER`, else ../shared/tinker/golden) when it is present, so that new cases dropped
 * there are checked too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const FIXTURE_TINKER = join(import.meta.dirname, '..', 'fixtures', 'tinker');
export const SHARED_TINKER = resolve(
  process.env.SEAL_SHARED_TINKER ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'tinker', 'golden'),
);

/** the folders that hold golden cases, the fixtures first */
export function tinkerGoldenDirs(): { name: string; dir: string }[] {
  const dirs = [{ name: 'fixtures', dir: FIXTURE_TINKER }];
  if (existsSync(join(SHARED_TINKER, 'fwdbwd_requests.jsonl')))
    dirs.push({ name: 'shared', dir: SHARED_TINKER });
  return dirs;
}

export function readTinkerJsonl<T>(dir: string, file: string): T[] {
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}
