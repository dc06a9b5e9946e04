/**
 * The Tinker training API's JSON shapes, as the hosted service and SkyRL's server send them.
 * Everything a server answers is parsed through these schemas at the boundary (`parseWire`), so a
 * shape the client does not understand fails loudly with the route's name instead of travelling on
 * as `undefined`. Unknown keys are dropped: both servers add fields over time.
 *
 * Requests are built by the client itself, so they are plain TypeScript types here.
 */
import { z } from 'zod';
import { TinkerError } from './errors.js';

// ---- shared pieces ---------------------------------------------------------------------------

const int = z.number().int();

export const EncodedTextChunkSchema = z.object({
  type: z.literal('encoded_text'),
  tokens: z.array(int),
});
export const ImageChunkSchema = z.object({
  type: z.literal('image'),
  /** base64 in JSON */
  data: z.string(),
  format: z.enum(['png', 'jpeg']),
  expected_tokens: int.nullish(),
});
export const ModelInputChunkSchema = z.discriminatedUnion('type', [EncodedTextChunkSchema, ImageChunkSchema]);
export const ModelInputSchema = z.object({ chunks: z.array(ModelInputChunkSchema) });

export const TensorDtypeSchema = z.enum(['float32', 'int64']);
export const TensorDataSchema = z.object({
  data: z.array(z.number()),
  dtype: TensorDtypeSchema,
  shape: z.array(int).nullish(),
  sparse_crow_indices: z.array(int).nullish(),
  sparse_col_indices: z.array(int).nullish(),
});
export const DatumSchema = z.object({
  model_input: ModelInputSchema,
  loss_fn_inputs: z.record(z.string(), TensorDataSchema),
});

export type EncodedTextChunk = z.infer<typeof EncodedTextChunkSchema>;
export type ImageChunk = z.infer<typeof ImageChunkSchema>;
export type ModelInputChunk = z.infer<typeof ModelInputChunkSchema>;
export type ModelInput = z.infer<typeof ModelInputSchema>;
export type TensorDtype = z.infer<typeof TensorDtypeSchema>;
export type TensorData = z.infer<typeof TensorDataSchema>;
export type WireDatum = z.infer<typeof DatumSchema>;

/** the loss functions the hosted service lists; SkyRL adds others and lacks `dro` */
export type LossFnName = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

// ---- requests (built by the client) ----------------------------------------------------------

export interface ForwardBackwardInput {
  readonly data: readonly WireDatum[];
  readonly loss_fn: string;
  /** null when the loss takes its defaults (the SDK sends None) */
  readonly loss_fn_config: Readonly<Record<string, number>> | null;
}

export interface ForwardBackwardRequestJson {
  readonly model_id: string;
  readonly seq_id: number;
  readonly forward_backward_input: ForwardBackwardInput;
}

export interface ForwardRequestJson {
  readonly model_id: string;
  readonly seq_id: number;
  readonly forward_input: ForwardBackwardInput;
}

/** Adam's parameters as the wire names them (SkyRL drops grad_clip_norm) */
export interface WireAdamParams {
  readonly learning_rate: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weight_decay: number;
  readonly grad_clip_norm: number;
}

export interface WireSamplingParams {
  readonly max_tokens: number;
  readonly seed?: number;
  /** always a list: SkyRL rejects a bare string */
  readonly stop?: readonly string[] | readonly number[];
  readonly temperature: number;
  readonly top_k: number;
  readonly top_p: number;
}

export interface SampleRequestJson {
  readonly num_samples: number;
  readonly prompt: ModelInput;
  readonly sampling_params: WireSamplingParams;
  readonly sampling_session_id?: string;
  readonly seq_id?: number;
  readonly base_model?: string;
  readonly model_path?: string;
  readonly prompt_logprobs?: boolean;
  readonly topk_prompt_logprobs: number;
  readonly type: 'sample';
}

// ---- answers ---------------------------------------------------------------------------------

/** the hosted service's `UntypedAPIFuture`, or SkyRL's `FutureResponse` (which adds future_id) */
export const FutureSchema = z.object({
  request_id: z.string(),
  model_id: z.string().nullish(),
  future_id: z.string().nullish(),
  status: z.string().nullish(),
});
export type FutureAnswer = z.infer<typeof FutureSchema>;

export const TryAgainSchema = z.object({
  type: z.literal('try_again'),
  request_id: z.string().nullish(),
  queue_state: z.string().nullish(),
  queue_state_reason: z.string().nullish(),
});
export const MetadataOnlySchema = z.object({
  status: z.literal('complete_metadata'),
  response_payload_size: z.number().nullish(),
});
/** the hosted service's failed request: a 200 body */
export const RequestFailedSchema = z.object({ error: z.string(), category: z.string().nullish() });
/** FastAPI's error body (SkyRL's failed request is a 400 with this) */
export const DetailSchema = z.object({ detail: z.unknown() });

export const ClientConfigSchema = z.object({
  pjwt_auth_enabled: z.boolean().nullish(),
  parallel_fwdbwd_chunks: z.boolean().nullish(),
  proto_compress_fwdbwd: z.boolean().nullish(),
  fwdbwd_max_chunk_len: int.positive().nullish(),
  fwdbwd_max_chunk_bytes_count: int.positive().nullish(),
  billing_exception_max_pause_duration_sec: z.number().nonnegative().nullish(),
  sample_max_concurrent_requests: int.positive().nullish(),
});
export type ClientConfigAnswer = z.infer<typeof ClientConfigSchema>;

export const CapabilitiesSchema = z.object({
  supported_models: z.array(z.object({ model_name: z.string(), max_context_length: int.nullish() }).loose()),
});
export type ServerCapabilities = z.infer<typeof CapabilitiesSchema>;

export const CreateSessionSchema = z.object({
  session_id: z.string(),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
});

export const GetInfoSchema = z.object({
  model_id: z.string(),
  model_data: z
    .object({
      arch: z.string().nullish(),
      model_name: z.string().nullish(),
      tokenizer_id: z.string().nullish(),
      base_model: z.string().nullish(),
      lora_config: z.object({ rank: int }).loose().nullish(),
    })
    .nullish(),
  is_lora: z.boolean().nullish(),
  lora_rank: int.nullish(),
  model_name: z.string().nullish(),
});
export type ModelInfo = z.infer<typeof GetInfoSchema>;

export const CreateModelResultSchema = z.object({ model_id: z.string() });
export const OptimStepResultSchema = z.object({ metrics: z.record(z.string(), z.number()).nullish() });
export const SaveWeightsResultSchema = z.object({ path: z.string() });
export const SaveForSamplerResultSchema = z.object({
  path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
});
export const LoadWeightsResultSchema = z.object({
  path: z.string().nullish(),
  model_id: z.string().nullish(),
});
export const CreateSamplingSessionSchema = z.object({ sampling_session_id: z.string() });

export const LossFnOutputSchema = z.record(z.string(), TensorDataSchema);
export const ForwardBackwardOutputSchema = z.object({
  loss_fn_output_type: z.string(),
  loss_fn_outputs: z.array(LossFnOutputSchema),
  metrics: z.record(z.string(), z.number()),
});
export type LossFnOutput = z.infer<typeof LossFnOutputSchema>;
export type ForwardBackwardOutput = z.infer<typeof ForwardBackwardOutputSchema>;

export const StopReasonSchema = z.enum(['stop', 'length']);
export const SampledSequenceSchema = z.object({
  stop_reason: StopReasonSchema,
  tokens: z.array(int),
  logprobs: z.array(z.number()).nullish(),
});
export const SampleResponseSchema = z.object({
  sequences: z.array(SampledSequenceSchema),
  prompt_logprobs: z.array(z.number().nullable()).nullish(),
  topk_prompt_logprobs: z.array(z.array(z.tuple([int, z.number()])).nullable()).nullish(),
  prompt_cache_hit_tokens: int.nullish(),
});
export type SampledSequence = z.infer<typeof SampledSequenceSchema>;
export type SampleResponse = z.infer<typeof SampleResponseSchema>;

// ---- checkpoints (the REST routes under training_runs/) ----------------------------------------

/** a date-time as the service sends it (ISO 8601); kept as text, shown as given */
const dateTime = z.string().min(1);

export const CheckpointSchema = z.object({
  /** `weights/<name>` or `sampler_weights/<name>` */
  checkpoint_id: z.string(),
  checkpoint_type: z.enum(['training', 'sampler']),
  time: dateTime,
  tinker_path: z.string().startsWith('tinker://'),
  size_bytes: int.nullish(),
  public: z.boolean().nullish(),
  /** null: never expires */
  expires_at: dateTime.nullish(),
});
export const CheckpointsListSchema = z.object({
  checkpoints: z.array(CheckpointSchema),
  cursor: z.unknown().optional(),
});
/** the archive route's JSON form (a 302 with Location is the other) */
export const ArchiveUrlSchema = z.object({ url: z.string().url(), expires: dateTime.nullish() });
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/** Validates a server's answer; a mismatch is a `bad_response` naming the route. */
export function parseWire<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw new TinkerError(
    'bad_response',
    `${where}: the server's answer is not the expected shape${path}: ${issue?.message ?? 'invalid'} ` +
      `(got ${JSON.stringify(value)?.slice(0, 200)})`,
  );
}
