/**
 * A learning rate that moves a LoRA. A LoRA needs a far larger rate than full fine-tuning of the
 * same model (the paper's 1e-6 for 3B-8B models barely moves one). The public Tinker cookbook's
 * calibrated rule for LoRA is `5e-4 x (2000 / hidden size)^e`, with an exponent per model family
 * (Qwen 0.0775, Llama 0.781) and no calibration for other families. Pure.
 */

/** the families the rule was calibrated on, and their exponents */
export const LORA_LR_EXPONENT = { qwen: 0.0775, llama: 0.781 } as const;
export type LoraFamily = keyof typeof LORA_LR_EXPONENT;

/** hidden sizes of the models the rule is most used with (from each model's config.json) */
export const HIDDEN_SIZE: Readonly<Record<string, number>> = {
  'Qwen/Qwen3-0.6B': 1024,
  'Qwen/Qwen3-1.7B': 2048,
  'Qwen/Qwen3-4B': 2560,
  'Qwen/Qwen3-4B-Instruct-2507': 2560,
  'Qwen/Qwen3-8B': 4096,
  'Qwen/Qwen3-14B': 5120,
  'Qwen/Qwen3-32B': 5120,
  'Qwen/Qwen3-30B-A3B': 2048,
  'Qwen/Qwen3-30B-A3B-Instruct-2507': 2048,
  'Qwen/Qwen3-235B-A22B': 4096,
  'Qwen/Qwen3-235B-A22B-Instruct-2507': 4096,
  'meta-llama/Llama-3.2-1B': 2048,
  'meta-llama/Llama-3.2-3B': 3072,
  'meta-llama/Llama-3.1-8B': 4096,
  'meta-llama/Llama-3.1-8B-Instruct': 4096,
  'meta-llama/Llama-3.1-70B': 8192,
  'meta-llama/Llama-3.3-70B-Instruct': 8192,
};

export type LoraLr =
  | {
      readonly calibrated: true;
      readonly lr: number;
      readonly family: LoraFamily;
      readonly hiddenSize: number;
      /** how the value came about, for the run record */
      readonly rule: string;
    }
  | { readonly calibrated: false; readonly reason: string };

export function loraFamily(baseModel: string): LoraFamily | undefined {
  const name = baseModel.toLowerCase();
  if (name.includes('qwen')) return 'qwen';
  if (name.includes('llama')) return 'llama';
  return undefined;
}

/** the cookbook's LoRA rate for `baseModel`, or why there is none */
export function loraLearningRate(baseModel: string, hiddenSize = HIDDEN_SIZE[baseModel]): LoraLr {
  const family = loraFamily(baseModel);
  if (family === undefined)
    return {
      calibrated: false,
      reason: `the LoRA rate rule is calibrated for Qwen and Llama models only, not ${baseModel}`,
    };
  if (hiddenSize === undefined || !(hiddenSize > 0))
    return { calibrated: false, reason: `the hidden size of ${baseModel} is not known to seal` };
  const e = LORA_LR_EXPONENT[family];
  const lr = 5e-4 * (2000 / hiddenSize) ** e;
  return {
    calibrated: true,
    lr,
    family,
    hiddenSize,
    rule: `5e-4 x (2000 / ${hiddenSize})^${e} = ${lr.toPrecision(3)} (the Tinker cookbook's LoRA rule for ${family === 'qwen' ? 'Qwen' : 'Llama'} models)`,
  };
}
