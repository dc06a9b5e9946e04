#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The newest modification time of a .ts file under dir (0 when there is none). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

// In a checkout, `dist/` is compiled from `src/`; running it after editing `src/` would run the
// old code while the run record names the new commit. So a stale build is rebuilt first.
// (An installed package ships `dist/` without `src/`, and is never checked.)
const main = join(root, 'dist', 'cli', 'main.js');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (existsSync(join(root, 'src')) && existsSync(tsc) && process.env.SEAL_NO_REBUILD !== '1') {
  const built = existsSync(main) ? statSync(main).mtimeMs : 0;
  if (newestSource(join(root, 'src')) > built) {
    console.error('seal: src/ is newer than the compiled dist/; rebuilding (npm run build) ...');
    try {
      execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
    } catch {
      console.error(
        'seal: the build failed (the errors are above); fix them, or run `npm run build` to see them again.',
      );
      process.exit(2);
    }
  }
}

import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
    console.error(
      'seal: the compiled code is missing. Run `npm ci` (or `npm run build`) in the seal folder first.',
    );
    process.exit(1);
  }
  throw err;
});
