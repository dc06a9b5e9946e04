/**
 * A checkpoint directory of the embedded policy, as `seal pretrain` writes it: `model.bin` (weights,
 * with their own sha256 trailer), `tokenizer.json` and `config.json` (settings, the rebuild command,
 * the sha256 of both other files). Loading checks every file against the config and fails with a
 * message that names the file and what to do.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../util/errors.js';
import { Gpt, type GptConfig } from './model.js';
import { Tokenizer } from './tokenizer.js';

export const MODEL_FILE = 'model.bin';
export const TOKENIZER_FILE = 'tokenizer.json';
export const CONFIG_FILE = 'config.json';
export const LOG_FILE = 'training.log.jsonl';

/** The base checkpoint shipped with the project (built by the command in its config.json). */
export const BASE_CHECKPOINT_DIR = fileURLToPath(new URL('../../checkpoints/embedded-base', import.meta.url));

/** What every checkpoint config holds; pretrain.ts writes a richer record of the same shape. */
export interface CheckpointConfig {
  readonly format: 'seal-embedded-pretrain';
  readonly version: 1;
  readonly settings: { readonly model: GptConfig };
  readonly command: string;
  readonly stepsDone: number;
  readonly modelSha256: string;
  /** absent in checkpoints written before tokenizers were checksummed */
  readonly tokenizerSha256?: string;
}

export const sha256Hex = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

export class CheckpointError extends UserError {}

/** A file the config says belongs to the checkpoint; missing or unreadable is the user's to fix. */
function readCheckpointFile(path: string, config: CheckpointConfig): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'is missing' : `cannot be read (${code ?? (e as Error).message})`;
    throw new CheckpointError(
      `${path} ${why}: the checkpoint is incomplete. Rebuild it with the command in ${CONFIG_FILE}: ${config.command}`,
    );
  }
}

export function loadCheckpoint<C extends CheckpointConfig = CheckpointConfig>(
  dir: string,
): { model: Gpt; tokenizer: Tokenizer; config: C } {
  const configPath = join(dir, CONFIG_FILE);
  if (!existsSync(configPath))
    throw new CheckpointError(
      `${dir} is not an embedded-policy checkpoint (no ${CONFIG_FILE}); give a directory written by seal pretrain`,
    );
  let config: C;
  try {
    config = JSON.parse(readFileSync(configPath, 'utf8')) as C;
  } catch (e) {
    throw new CheckpointError(
      `${configPath} is not valid JSON (${(e as Error).message}); rebuild the checkpoint`,
    );
  }
  if (
    typeof config !== 'object' ||
    config === null ||
    config.format !== 'seal-embedded-pretrain' ||
    config.version !== 1
  )
    throw new CheckpointError(
      `${configPath} is not a seal pretrain config (version 1); rebuild the checkpoint`,
    );
  const modelPath = join(dir, MODEL_FILE);
  const bytes = new Uint8Array(readCheckpointFile(modelPath, config));
  let model: Gpt;
  try {
    model = Gpt.deserialize(bytes).model;
  } catch (e) {
    throw new CheckpointError(
      `${modelPath}: ${(e as Error).message}. Rebuild it with the command in ${CONFIG_FILE}: ${config.command}`,
    );
  }
  if (sha256Hex(bytes) !== config.modelSha256)
    throw new CheckpointError(
      `cannot load embedded model weights: ${modelPath} is not the file ${CONFIG_FILE} records (sha256 differs)`,
    );
  if (JSON.stringify(model.config) !== JSON.stringify(config.settings.model))
    throw new CheckpointError(`${modelPath}: model config differs from ${CONFIG_FILE}`);
  const tokenizerPath = join(dir, TOKENIZER_FILE);
  const tokenizerText = readCheckpointFile(tokenizerPath, config).toString('utf8');
  if (config.tokenizerSha256 !== undefined && sha256Hex(tokenizerText) !== config.tokenizerSha256)
    throw new CheckpointError(
      `${tokenizerPath} is not the file ${CONFIG_FILE} records (sha256 differs); rebuild the checkpoint with: ${config.command}`,
    );
  let tokenizer: Tokenizer;
  try {
    tokenizer = Tokenizer.fromJSON(JSON.parse(tokenizerText));
  } catch (e) {
    throw new CheckpointError(`${tokenizerPath}: ${(e as Error).message}`);
  }
  if (tokenizer.vocabSize > model.config.vocabSize)
    throw new CheckpointError(`${tokenizerPath} has more tokens than the model's vocabulary`);
  return { model, tokenizer, config };
}
