/**
 * Settings several commands share, each declared once in one wording, for their schemas to
 * spread in: the task suite and where the BFCL data is, the sampling of a policy, and the modes of
 * the interface components. What only a higher floor knows (the suite names, the data variable)
 * comes in as an argument, so that this file stays at the bottom.
 *
 * Temperature is in [0, 2]. 0 (greedy decoding) is what strict evaluation asks of a policy; 2 is
 * the largest value the OpenAI chat API accepts, so a server is never sent a value it refuses
 * after the run has started, and beyond it sampling from a small model is noise. (A training
 * rollout's lower bound stays 0.05: GRPO needs the rollouts of a group to differ.)
 */
import { z } from 'zod';

export const TEMPERATURE_MAX = 2;

/** `--suite`: which task suite */
export const suiteSetting = <const T extends readonly [string, ...string[]]>(
  suites: T,
  fallback: T[number],
  description = 'task suite: bfcl (the BFCL multi-turn data) or mini (built in, synthetic)',
) =>
  z
    .enum(suites)
    .default(fallback as never)
    .meta({ description, placeholder: 'name' });

/** `--data-dir`: where the BFCL task files are, when not where `seal` looks by itself */
export const dataDirSetting = (envVar: string) =>
  z
    .string()
    .min(1)
    .optional()
    .meta({
      description: `BFCL data directory (suite bfcl; default: $${envVar}, else the cache \`seal data pull bfcl\` fills)`,
      placeholder: 'dir',
    });

/** The sampling of a policy's completions (what an OpenAI-compatible request carries). */
export const SAMPLING_SHAPE = {
  temperature: z.number().min(0).max(TEMPERATURE_MAX).default(0).describe('sampling temperature (0: greedy)'),
  topP: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .meta({ description: 'nucleus sampling (top-p)', placeholder: 'p' }),
  maxTokens: z.number().int().min(1).max(10_000_000).optional().describe('completion length limit per step'),
  seed: z.number().int().optional().describe('sampling seed, when the server supports it'),
  stop: z.array(z.string()).optional().meta({ description: 'stop sequences', placeholder: 'text...' }),
} as const;

/** How an interface component is shown: `auto` as the failure profile says (SEAL), or forced. */
export const INTERFACE_MODES = ['auto', 'on', 'off'] as const;
export type InterfaceMode = (typeof INTERFACE_MODES)[number];
export const interfaceModeSetting = (component: string) =>
  z
    .enum(INTERFACE_MODES)
    .default('auto')
    .meta({
      description: `interface: ${component} (auto: as the failure profile says; on, off: forced)`,
      placeholder: 'mode',
    });
