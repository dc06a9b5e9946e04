/**
 * The settings of `seal eval`, declared once (as train/config.ts declares `seal train`'s): every
 * flag with its type, bounds, default and help lives in this zod schema, and the flags, their
 * validation and the `--help` text come from it (util/settings.ts). Numbers are checked as the
 * flag is read, in the words every command's number flags use.
 */
import { z } from 'zod';
import { TOOL_CALL_FORMATS } from '../agent/format.js';
import { DATA_ENV, EVAL_SUITES } from '../envs/suites.js';
import { rendererSetting } from '../render/open.js';
import { dataDirSetting, SAMPLING_SHAPE, suiteSetting } from '../util/fragments.js';
import { Settings } from '../util/settings.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** Node's timers hold at most 2^31-1 ms; a longer delay fires after 1 ms, so every request would time out. */
export const MAX_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** τ²'s domains, and `all` */
export const TAU2_DOMAIN_CHOICES = ['retail', 'airline', 'telecom', 'all'] as const;

export const POLICY_KINDS = ['server', 'embedded', 'tinker'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export const EVAL_SCHEMA = z
  .object({
    suite: suiteSetting(
      EVAL_SUITES,
      'bfcl',
      'task suite: bfcl (the BFCL multi-turn data), mini (built in, synthetic) or tau2 (τ²-bench retail, airline, telecom)',
    ),
    split: z.string().min(1).default('test').meta({
      description:
        'test, train, dev (mini), all, or comma-separated task ids (tau2: every task is test; ids as retail/0)',
      placeholder: 'split',
    }),
    categories: z.string().min(1).optional().meta({
      description:
        'bfcl: comma-separated categories to play, within --split: multi-turn ones (multi_turn_base, ...), or BFCL v4 agentic ones (memory_kv, memory_vector, memory_rec_sum, web_search_base, web_search_no_snippet; memory, web_search and agentic name their groups)',
      placeholder: 'names',
    }),
    policy: z.enum(POLICY_KINDS).default('server').meta({
      description:
        'server: an OpenAI-compatible model server; embedded: the built-in small model; tinker: sampling on a Tinker service',
      placeholder: 'kind',
    }),
    model: z.string().min(1).optional().meta({
      description:
        'server: the model name as the server knows it; embedded: a checkpoint directory (default: the shipped base); tinker: a base model, a tinker://.../sampler_weights/... path, or a seal train --learner tinker checkpoint directory',
      placeholder: 'name',
    }),
    tokenizer: z.string().min(1).optional().meta({
      description: "tinker: a Hugging Face folder with the model's tokenizer.json and chat template",
      placeholder: 'dir',
    }),
    baseModel: z.string().min(1).optional().meta({
      description: 'tinker: the base model whose tokenizer a tinker:// path needs',
      placeholder: 'name',
    }),
    renderer: rendererSetting('tinker: '),
    thinking: z.enum(['template', 'on', 'off']).default('template').meta({
      description: "tinker: the chat template's enable_thinking (as the run trained)",
      placeholder: 'mode',
    }),
    baseUrl: z.string().min(1).optional().meta({
      description:
        'OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL); tinker: the Tinker service (default: $TINKER_BASE_URL, else the hosted one)',
      placeholder: 'url',
    }),
    apiKeyEnv: z
      .string()
      .min(1)
      .default('OPENAI_API_KEY')
      .meta({ description: 'environment variable holding the API key', placeholder: 'var' }),
    format: z.enum(TOOL_CALL_FORMATS).optional().meta({
      description: 'tool-call format (default: native for a server, compact for embedded)',
      placeholder: 'format',
    }),
    concurrency: int(1, 4096).default(8).describe('tasks in flight at once'),
    ...SAMPLING_SHAPE,
    extraBody: z.string().min(1).optional().meta({
      description: 'extra request fields, e.g. \'{"return_token_ids": true}\' for vLLM',
      placeholder: 'json',
    }),
    logprobs: z.literal(true).optional().describe('ask for token logprobs and keep them in the trajectories'),
    timeout: z
      .number()
      .min(0.001)
      .max(MAX_TIMEOUT_SECONDS)
      .default(300)
      .meta({ description: 'per-request timeout', placeholder: 'seconds' }),
    retries: int(0, 100).default(3).describe('retries on 429, 5xx, timeouts and network errors'),
    out: z.string().min(1).meta({
      description: 'run folder; rerunning into it with the same settings resumes',
      placeholder: 'dir',
    }),
    force: z
      .literal(true)
      .optional()
      .describe(
        'start --out over: remove the run.json, results.jsonl, bfcl_result.jsonl, summary.json and summary.md of a run already there (other files stay)',
      ),
    dataDir: dataDirSetting(DATA_ENV.bfcl),
    domain: z.enum(TAU2_DOMAIN_CHOICES).default('all').meta({
      description: 'tau2: the domain to play (retail, airline, telecom) or all three',
      placeholder: 'name',
    }),
    trials: int(1, 1000)
      .default(1)
      .describe('tau2: plays of every task, each with its own seed (for pass^k)'),
    maxSteps: int(1, 100_000).default(200).meta({
      description: "tau2: a simulation's message limit (the reference's 200)",
      placeholder: 'n',
    }),
    userBaseUrl: z.string().min(1).optional().meta({
      description: 'tau2: the OpenAI-compatible server of the user simulator (default: --base-url)',
      placeholder: 'url',
    }),
    userModel: z.string().min(1).optional().meta({
      description: 'tau2: the model that plays the user, as its server knows it (required for tau2)',
      placeholder: 'name',
    }),
    userApiKeyEnv: z.string().min(1).default('OPENAI_API_KEY').meta({
      description: "tau2: environment variable holding the user server's API key",
      placeholder: 'var',
    }),
    embeddingsUrl: z.string().min(1).optional().meta({
      description:
        'memory_vector: an OpenAI-compatible embeddings server, e.g. http://127.0.0.1:8080/v1 (the reference embeds with all-MiniLM-L6-v2)',
      placeholder: 'url',
    }),
    embeddingsModel: z.string().min(1).default('all-MiniLM-L6-v2').meta({
      description: 'memory_vector: the embeddings model, as its server knows it',
      placeholder: 'name',
    }),
    searchUrl: z.string().min(1).optional().meta({
      description: `web search: the search provider (default: SerpAPI, with the key in $SERPAPI_API_KEY)`,
      placeholder: 'url',
    }),
    webCache: z.string().min(1).optional().meta({
      description:
        'web search: the folder that records every search and page fetched, and answers from it when asked again (default: web-cache/ in --out)',
      placeholder: 'dir',
    }),
    webOffline: z
      .literal(true)
      .optional()
      .describe('web search: answer only from the web cache (a repeat run, without network or key)'),
    tau2Data: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `tau2: the folder holding data/tau2/ (default: $${DATA_ENV.tau2}, else the cache \`seal data pull tau2\` fills)`,
        placeholder: 'dir',
      }),
  })
  .strict();

export type EvalConfig = z.infer<typeof EVAL_SCHEMA>;

/** a flag's range is checked as it is read */
export const EVAL_SETTINGS = new Settings(EVAL_SCHEMA, 'flag');
