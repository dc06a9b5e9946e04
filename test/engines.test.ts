/**
 * The Node version the README names is one every installed package supports: `npm ci` on it
 * prints no engine warning (one did, for cookie@2 under fastify's light-my-request, which
 * package.json's overrides now pin to a release that takes Node 20).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe('the Node version', () => {
  const oldest = semver.minVersion(pkg.engines.node)!;

  it('is the one the README names', () => {
    expect(oldest.version).toBe('20.19.0');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('Node 20 (>= 20.19)');
  });

  it('is supported by every package of the lock file', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
        return range && !semver.satisfies(oldest, range) ? [`${path}@${p.version}: node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
