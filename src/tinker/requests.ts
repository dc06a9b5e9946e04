/**
 * The bodies the client sends, route by route, in the wire names (snake_case, `type` tags where
 * the hosted service's models carry them). Pure: ids and counters come in as arguments.
 */
import { type LossSpec, lossConfigOf, type TinkerDatum, toWireDatum } from './datums.js';
import { encodeForwardBackwardRequest, PROTO_CONTENT_TYPE } from './proto.js';
import type {
  ForwardBackwardRequestJson,
  ForwardRequestJson,
  ModelInput,
  SampleRequestJson,
  WireAdamParams,
  WireDatum,
  WireSamplingParams,
} from './schemas.js';
import { zstdCompress } from './zstd.js';

/** one encoded request: the route under `/api/v1/`, its body and content type */
export interface EncodedRequest {
  readonly route: string;
  readonly body: string | Uint8Array;
  readonly contentType: string;
  /** the body is compressed (sent as `Content-Encoding`) */
  readonly contentEncoding?: 'zstd';
}

export function forwardBackwardRequest(
  modelId: string,
  seqId: number,
  data: readonly WireDatum[],
  loss: LossSpec,
): ForwardBackwardRequestJson {
  return {
    model_id: modelId,
    seq_id: seqId,
    forward_backward_input: { data, loss_fn: loss.fn, loss_fn_config: lossConfigOf(loss) },
  };
}

/** the caller's datums in the wire form (throws a `usage` error on the first bad one) */
export function wireData(data: readonly TinkerDatum[], loss: LossSpec): WireDatum[] {
  return data.map((d, i) => toWireDatum(d, loss, i));
}

/**
 * A forward(-backward) request in the chosen wire form. In JSON a forward-only pass goes to
 * `/forward` (the JSON path has no forward_only flag, and silently ignoring it would train);
 * in protobuf both go to `/forward_backward` with the flag.
 */
export function encodeForwardBackward(
  req: ForwardBackwardRequestJson,
  wire: 'json' | 'proto',
  forwardOnly: boolean,
): EncodedRequest {
  if (wire === 'proto') {
    return {
      route: 'forward_backward',
      body: encodeForwardBackwardRequest(req, forwardOnly),
      contentType: PROTO_CONTENT_TYPE,
    };
  }
  if (forwardOnly) {
    const fwd: ForwardRequestJson = {
      model_id: req.model_id,
      seq_id: req.seq_id,
      forward_input: req.forward_backward_input,
    };
    return { route: 'forward', body: JSON.stringify(fwd), contentType: 'application/json' };
  }
  return { route: 'forward_backward', body: JSON.stringify(req), contentType: 'application/json' };
}

/** Adam's parameters; defaults are the SDK's (lr 1e-4, betas 0.9 / 0.95, eps 1e-12, no decay, no clip) */
export interface AdamOptions {
  readonly learningRate?: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
  /** global gradient-norm clip, 0 for none (SkyRL ignores it) */
  readonly gradClipNorm?: number;
}

export function adamParams(o: AdamOptions = {}): WireAdamParams {
  return {
    learning_rate: o.learningRate ?? 1e-4,
    beta1: o.beta1 ?? 0.9,
    beta2: o.beta2 ?? 0.95,
    eps: o.eps ?? 1e-12,
    weight_decay: o.weightDecay ?? 0,
    grad_clip_norm: o.gradClipNorm ?? 0,
  };
}

export interface SamplingOptions {
  /** required by SkyRL, so always sent */
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly topK?: number;
  readonly topP?: number;
  readonly seed?: number;
  /** stop strings or stop token ids (always sent as a list) */
  readonly stop?: readonly string[] | readonly number[];
}

export function samplingParams(o: SamplingOptions): WireSamplingParams {
  return {
    max_tokens: o.maxTokens,
    temperature: o.temperature ?? 1,
    top_k: o.topK ?? -1,
    top_p: o.topP ?? 1,
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.stop !== undefined && o.stop.length > 0 ? { stop: [...o.stop] as string[] | number[] } : {}),
  };
}

export function sampleRequest(args: {
  prompt: ModelInput;
  numSamples: number;
  params: WireSamplingParams;
  samplingSessionId: string;
  seqId: number;
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
}): SampleRequestJson {
  return {
    num_samples: args.numSamples,
    prompt: args.prompt,
    sampling_params: args.params,
    sampling_session_id: args.samplingSessionId,
    seq_id: args.seqId,
    ...(args.promptLogprobs ? { prompt_logprobs: true } : {}),
    topk_prompt_logprobs: args.topkPromptLogprobs,
    type: 'sample',
  };
}

/**
 * A protobuf forward_backward body compressed with zstd, as the SDK sends it when the server's
 * client config sets `proto_compress_fwdbwd`. JSON bodies are never compressed (nor does the SDK).
 */
export async function zstdEncoded(req: EncodedRequest): Promise<EncodedRequest> {
  if (req.contentType !== PROTO_CONTENT_TYPE || typeof req.body === 'string' || req.contentEncoding)
    return req;
  return { ...req, body: await zstdCompress(req.body), contentEncoding: 'zstd' };
}

export function json(route: string, body: unknown): EncodedRequest {
  return { route, body: JSON.stringify(body), contentType: 'application/json' };
}
