/**
 * The oracle fixtures in the repository are the recorded ones: each decompresses to the sha256 its
 * README states, and beside the shared copy (CI) to exactly that copy's content.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FIXTURES_DIR,
  HAS_SHARED,
  ORACLE_FILES,
  type OracleFile,
  readFixture,
  readOracle,
} from './support/golden.js';

const readme = readFileSync(join(FIXTURES_DIR, 'README.md'), 'utf8');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('oracle fixtures', () => {
  for (const file of Object.keys(ORACLE_FILES) as OracleFile[]) {
    it(`${file}: the sum the README states${HAS_SHARED ? ', and the shared copy' : ''}`, () => {
      const text = readFixture(file);
      expect(readme).toContain(`${sha256(text)}  ${file}`);
      if (HAS_SHARED) expect(text === readOracle(file)).toBe(true);
    });
  }
});
