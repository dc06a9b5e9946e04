/**
 * The Tinker client's public surface: what a `TinkerLearner` and a `TinkerPolicy` build on.
 * The wire details (schemas, protobuf, futures, transport) stay importable from their own modules.
 */

export {
  type ArchiveUrl,
  type CheckpointKind,
  parseRunId,
  parseTinkerPath,
  type TinkerPath,
} from './checkpoints.js';
export {
  type CallOptions,
  type CreateModelOptions,
  type ForwardBackwardResult,
  type OptimStepResult,
  type SampledSequence,
  type SampleOptions,
  type SampleResult,
  SamplingClient,
  type SaveOptions,
  TinkerClient,
  TrainingClient,
} from './client.js';
export {
  cispoLoss,
  crossEntropyLoss,
  importanceSamplingLoss,
  type LossFnInputs,
  type LossSpec,
  ppoLoss,
  ppoLossFromClipEps,
  sequenceDatum,
  type TinkerDatum,
} from './datums.js';
export { TinkerError, type TinkerErrorKind } from './errors.js';
export type { QueueStateEvent } from './futures.js';
export type { RetryPolicy } from './http.js';
export type { AdamOptions, SamplingOptions } from './requests.js';
export type {
  Checkpoint,
  LossFnOutput,
  ModelInfo,
  ModelInput,
  ServerCapabilities,
  TensorData,
} from './schemas.js';
export {
  type ClientConfig,
  HOSTED_BASE_URL,
  resolveOptions,
  type TinkerClientOptions,
  type WireForm,
} from './session.js';
