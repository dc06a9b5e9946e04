/**
 * Token-level training data in Tinker's form, and the pure steps between a caller's arrays and the
 * wire: the standard shift (input = tokens[:-1], targets = tokens[1:]), checks that every per-token
 * input has the input's length, loss specs, the split of a batch into chunks within the server's
 * limits, and the merge of the chunks' results by their metric suffixes.
 */
import { TinkerError } from './errors.js';
import type { ForwardBackwardOutput, ModelInput, ModelInputChunk, TensorData, WireDatum } from './schemas.js';

/** The per-token inputs of a loss, each as long as the model input (targets are shifted by one). */
export interface LossFnInputs {
  /** the token each position predicts (int64 on the wire) */
  readonly target_tokens: readonly number[];
  /** cross_entropy's per-token weight (SkyRL also reads it as a mask for every loss; default ones) */
  readonly weights?: readonly number[];
  /** the sampler's logprob of each target (0 where nothing was sampled) */
  readonly logprobs?: readonly number[];
  /** the per-token advantage (0 where no gradient should flow) */
  readonly advantages?: readonly number[];
}

export interface TinkerDatum {
  /** token ids (one text chunk), or the chunks themselves */
  readonly modelInput: readonly number[] | ModelInput;
  readonly lossFnInputs: LossFnInputs;
}

/**
 * A loss as the wire names it: `fn` is `loss_fn`, `config` its `loss_fn_config` (float values).
 * Losses are sums over tokens on every server: normalise through the advantages or weights.
 */
export interface LossSpec {
  readonly fn: string;
  readonly config?: Readonly<Record<string, number>>;
}

export const crossEntropyLoss: LossSpec = { fn: 'cross_entropy' };
export const importanceSamplingLoss: LossSpec = { fn: 'importance_sampling' };

/** PPO's clipped surrogate, the ratio clipped to [low, high] (the servers default to 0.8 / 1.2) */
export function ppoLoss(clip: { low: number; high: number }): LossSpec {
  if (!(clip.low >= 0 && clip.high > clip.low)) {
    throw new TinkerError(
      'usage',
      `ppo clip thresholds need 0 <= low < high, got ${clip.low} / ${clip.high}`,
    );
  }
  return { fn: 'ppo', config: { clip_low_threshold: clip.low, clip_high_threshold: clip.high } };
}

/** PPO with the method's symmetric clip eps: thresholds 1 - eps and 1 + eps */
export function ppoLossFromClipEps(clipEps: number): LossSpec {
  return ppoLoss({ low: 1 - clipEps, high: 1 + clipEps });
}

/** CISPO's clipped importance weight, thresholds [low, high] */
export function cispoLoss(clip: { low: number; high: number }): LossSpec {
  return { fn: 'cispo', config: { clip_low_threshold: clip.low, clip_high_threshold: clip.high } };
}

/**
 * The datum of one whole sequence under the standard shift: `tokens` is the prompt and what was
 * sampled; each per-token array is aligned with `tokens` (its entry i belongs to token i as a target
 * of token i - 1, so entry 0 is dropped, as the learner contract has it).
 */
export function sequenceDatum(
  tokens: readonly number[],
  perToken: {
    weights?: readonly number[];
    logprobs?: readonly number[];
    advantages?: readonly number[];
  } = {},
): TinkerDatum {
  if (tokens.length < 2)
    throw new TinkerError('usage', `a training sequence needs 2 or more tokens, got ${tokens.length}`);
  const shifted = (name: string, xs: readonly number[] | undefined) => {
    if (xs === undefined) return undefined;
    if (xs.length !== tokens.length) {
      throw new TinkerError('usage', `${name} has ${xs.length} entries for ${tokens.length} tokens`);
    }
    return xs.slice(1);
  };
  const weights = shifted('weights', perToken.weights);
  const logprobs = shifted('logprobs', perToken.logprobs);
  const advantages = shifted('advantages', perToken.advantages);
  return {
    modelInput: tokens.slice(0, -1),
    lossFnInputs: {
      target_tokens: tokens.slice(1),
      ...(weights ? { weights } : {}),
      ...(logprobs ? { logprobs } : {}),
      ...(advantages ? { advantages } : {}),
    },
  };
}

export function modelInputOf(input: readonly number[] | ModelInput): ModelInput {
  if (!Array.isArray(input)) return input as ModelInput;
  return { chunks: [{ type: 'encoded_text', tokens: [...(input as readonly number[])] }] };
}

export function modelInputLength(input: ModelInput): number {
  return input.chunks.reduce(
    (n, c: ModelInputChunk) => n + (c.type === 'encoded_text' ? c.tokens.length : (c.expected_tokens ?? 0)),
    0,
  );
}

function tensor(name: string, values: readonly number[], datum: number): TensorData {
  const isInt = name === 'target_tokens';
  values.forEach((v, i) => {
    if (isInt ? !Number.isSafeInteger(v) || v < 0 : !Number.isFinite(v)) {
      throw new TinkerError(
        'usage',
        `datum ${datum}: ${name}[${i}] is ${v} (${isInt ? 'a token id' : 'a finite number'} expected)`,
      );
    }
  });
  return { data: [...values], dtype: isInt ? 'int64' : 'float32', shape: [values.length] };
}

/** A caller's datum in the wire form, after checking lengths and the loss's required inputs. */
export function toWireDatum(d: TinkerDatum, loss: LossSpec, index: number): WireDatum {
  const modelInput = modelInputOf(d.modelInput);
  const n = modelInputLength(modelInput);
  if (d.lossFnInputs.target_tokens === undefined) {
    throw new TinkerError('usage', `datum ${index}: the ${loss.fn} loss needs loss_fn_inputs.target_tokens`);
  }
  const inputs: Record<string, TensorData> = {};
  for (const [name, values] of Object.entries(d.lossFnInputs) as [string, readonly number[] | undefined][]) {
    if (values === undefined) continue;
    if (values.length !== n) {
      throw new TinkerError(
        'usage',
        `datum ${index}: ${name} has ${values.length} entries, the model input ${n} tokens`,
      );
    }
    inputs[name] = tensor(name, values, index);
  }
  return { model_input: modelInput, loss_fn_inputs: inputs };
}

/** the loss_fn_config a spec sends (null when it takes the server's defaults) */
export function lossConfigOf(loss: LossSpec): Record<string, number> | null {
  if (!loss.config || Object.keys(loss.config).length === 0) return null;
  for (const [k, v] of Object.entries(loss.config)) {
    if (!Number.isFinite(v))
      throw new TinkerError('usage', `loss_fn_config.${k} is ${v} (a finite number expected)`);
  }
  return { ...loss.config };
}

// ---- chunking --------------------------------------------------------------------------------

export interface ChunkLimits {
  /** datums per request (`fwdbwd_max_chunk_len`) */
  readonly maxDatums: number;
  /** estimated bytes per request (`fwdbwd_max_chunk_bytes_count`) */
  readonly maxBytes: number;
}

/** the server's estimate of a datum's size: 4 bytes a token, tensors at their dtype's width */
export function estimateDatumBytes(d: WireDatum): number {
  let bytes = 0;
  for (const c of d.model_input.chunks)
    bytes += c.type === 'encoded_text' ? c.tokens.length * 4 : c.data.length;
  for (const t of Object.values(d.loss_fn_inputs)) {
    bytes += t.data.length * (t.dtype === 'int64' ? 8 : 4);
    bytes += 8 * ((t.sparse_crow_indices?.length ?? 0) + (t.sparse_col_indices?.length ?? 0));
  }
  return bytes;
}

/**
 * Consecutive chunks, each within both limits (a single datum larger than maxBytes travels alone:
 * the server, not the client, decides whether it is too large).
 */
export function chunkDatums(data: readonly WireDatum[], limits: ChunkLimits): WireDatum[][] {
  const chunks: WireDatum[][] = [];
  let current: WireDatum[] = [];
  let bytes = 0;
  for (const d of data) {
    const size = estimateDatumBytes(d);
    if (current.length > 0 && (current.length >= limits.maxDatums || bytes + size > limits.maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

// ---- merging chunk results -------------------------------------------------------------------

/**
 * One result from the chunks' results, in order: outputs concatenated; metrics reduced by the
 * suffix of their key (`:sum` adds, `:mean` weights by datum count, `:min`/`:max`). A key with
 * another suffix, or missing from some chunk, is dropped, as the SDK drops it.
 */
export function mergeForwardBackwardOutputs(
  results: readonly ForwardBackwardOutput[],
): ForwardBackwardOutput {
  if (results.length === 0) return { loss_fn_output_type: '', loss_fn_outputs: [], metrics: {} };
  if (results.length === 1) return results[0]!;
  const metrics: Record<string, number> = {};
  const counts = results.map((r) => r.loss_fn_outputs.length);
  for (const key of Object.keys(results[0]!.metrics)) {
    if (!results.every((r) => key in r.metrics)) continue;
    const values = results.map((r) => r.metrics[key]!);
    const reduction = key.slice(key.lastIndexOf(':') + 1);
    if (reduction === 'sum') metrics[key] = values.reduce((a, b) => a + b, 0);
    else if (reduction === 'min') metrics[key] = Math.min(...values);
    else if (reduction === 'max') metrics[key] = Math.max(...values);
    else if (reduction === 'mean') {
      const total = counts.reduce((a, b) => a + b, 0);
      metrics[key] =
        total > 0
          ? values.reduce((s, v, i) => s + v * counts[i]!, 0) / total
          : values.reduce((a, b) => a + b, 0) / values.length;
    }
  }
  return {
    loss_fn_output_type: results[0]!.loss_fn_output_type,
    loss_fn_outputs: results.flatMap((r) => r.loss_fn_outputs),
    metrics,
  };
}
