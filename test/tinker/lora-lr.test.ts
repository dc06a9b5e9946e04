import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loraLearningRate } from '../../src/tinker/lora-lr.js';
import { resolveConfig } from '../../src/train/config.js';
import { lrChoice } from '../../src/train/tinker.js';
import { ROOT } from '../support/cli.js';

describe("the cookbook's LoRA learning-rate rule", () => {
  it('gives 5e-4 x (2000 / hidden)^e for the families it was calibrated on', () => {
    // Qwen3-8B: hidden 4096, e 0.0775: 5e-4 x 0.48828^0.0775 = 5e-4 x 0.94596
    const qwen = loraLearningRate('Qwen/Qwen3-8B');
    expect(qwen.calibrated && qwen.lr).toBeCloseTo(4.7298e-4, 8);
    // Llama 3.1 8B: hidden 4096, e 0.781: 5e-4 x 0.48828^0.781 = 5e-4 x 0.57128
    const llama = loraLearningRate('meta-llama/Llama-3.1-8B-Instruct');
    expect(llama.calibrated && llama.lr).toBeCloseTo(2.8564e-4, 8);
    // a smaller Qwen gets a larger rate: hidden 1024
    const small = loraLearningRate('Qwen/Qwen3-0.6B');
    expect(small.calibrated && small.lr).toBeCloseTo(5.2663e-4, 8);
    // a hidden size read elsewhere (a model folder's config.json) is taken as given
    const given = loraLearningRate('Qwen/Qwen3-Fancy', 2000);
    expect(given.calibrated && given.lr).toBe(5e-4);
  });

  it('says why where it has no rate: another family, or a size it does not know', () => {
    expect(loraLearningRate('deepseek-ai/DeepSeek-V3.1')).toEqual({
      calibrated: false,
      reason:
        'the LoRA rate rule is calibrated for Qwen and Llama models only, not deepseek-ai/DeepSeek-V3.1',
    });
    expect(loraLearningRate('Qwen/Qwen9-Unknown')).toMatchObject({ calibrated: false });
  });

  it('is the default of seal train --learner tinker; an explicit lr wins; the record says which', () => {
    const tinker = { learner: 'tinker', baseModel: 'Qwen/Qwen3-8B' };
    const ruled = resolveConfig(undefined, tinker).config;
    expect(ruled.lr).toBeCloseTo(4.7298e-4, 8);
    expect(lrChoice(ruled).source).toMatch(/^rule: 5e-4 x \(2000 \/ 4096\)\^0\.0775 = 0\.000473/);
    const given = resolveConfig(undefined, { ...tinker, lr: 1e-5 }).config;
    expect(given.lr).toBe(1e-5);
    expect(lrChoice(given).source).toBe('given (the LoRA rule would give 0.000473)');
    const other = resolveConfig(undefined, { learner: 'tinker', baseModel: 'moonshotai/Kimi-K2' }).config;
    expect(other.lr).toBe(1e-4);
    expect(lrChoice(other).source).toMatch(/^given or seal's default \(the LoRA rate rule is calibrated/);
    // the embedded learner keeps its own default
    expect(resolveConfig(undefined, {}).config.lr).toBe(1e-4);
    // the paper preset leaves the rate to the rule
    const paper = resolveConfig(join(ROOT, 'configs', 'tinker-bfcl-paper.yaml'), {
      baseModel: 'Qwen/Qwen3-8B',
    });
    expect(paper.config.lr).toBeCloseTo(4.7298e-4, 8);
  });

  it('keeps an lr set in a config file, as a flag would be kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-lora-lr-'));
    try {
      const file = join(dir, 'run.yaml');
      writeFileSync(file, 'learner: tinker\nbaseModel: Qwen/Qwen3-8B\nlr: 2.5e-5\n');
      const { config, overrides } = resolveConfig(file, {});
      expect(config.lr).toBe(2.5e-5);
      expect(overrides.lr).toBe(2.5e-5);
      expect(lrChoice(config).source).toBe('given (the LoRA rule would give 0.000473)');
      // a flag over the file still wins
      expect(resolveConfig(file, { lr: 1e-6 }).config.lr).toBe(1e-6);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
