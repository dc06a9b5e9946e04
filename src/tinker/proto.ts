/**
 * The protobuf wire form (package `tinker_public`, proto3) that the hosted service requires for
 * `forward_backward` since SDK 0.25, and that both servers send for forward-backward and sample
 * results when asked with `Accept: application/x-protobuf`. The `.proto` is not published; the
 * schema below is the SDK's descriptor written out by hand, limited to the messages the client
 * and the test server exchange.
 *
 * Arrays travel as raw little-endian bytes: tokens int32, tensors in their dtype, sparse indices
 * and batched-tensor offsets int64 (offsets count bytes, not elements). Maps are written in key
 * order, as a deterministic encoder writes them, so one request has one byte form.
 *
 * Both directions of every message are here: the client encodes requests and decodes results, the
 * test server does the reverse.
 */
import protobuf from 'protobufjs';
import type {
  ForwardBackwardOutput,
  ForwardBackwardRequestJson,
  LossFnOutput,
  ModelInputChunk,
  SampleResponse,
  TensorData,
  TensorDtype,
  WireDatum,
} from './schemas.js';

const SCHEMA = `
syntax = "proto3";
package tinker_public;
enum DType { DTYPE_UNSPECIFIED = 0; DTYPE_FLOAT32 = 1; DTYPE_INT64 = 2; DTYPE_INT32 = 3; DTYPE_BFLOAT16 = 4; }
enum StopReason { STOP_REASON_STOP = 0; STOP_REASON_LENGTH = 1; }
message ForwardBackwardRequest {
  string model_id = 1; int32 seq_id = 2; repeated Datum data = 3; string loss_fn = 4;
  map<string, double> loss_fn_config = 5; bool forward_only = 6;
}
message Datum { repeated Chunk model_input = 1; map<string, Tensor> loss_fn_inputs = 2; }
message Chunk { oneof chunk { EncodedTextChunk encoded_text = 1; ImageChunk image = 2; DmelChunk dmel = 3; } }
message EncodedTextChunk { bytes tokens = 1; }
message ImageChunk { bytes data = 1; string format = 2; optional int32 expected_tokens = 3; }
message DmelChunk { bytes dmel = 1; }
message Tensor { oneof encoding { bytes dense = 1; SparseCsr sparse_csr = 2; } DType dtype = 3; repeated int64 shape = 4; }
message SparseCsr { bytes values = 1; bytes crow_indices = 2; bytes col_indices = 3; }
message ForwardBackwardOutput {
  string loss_fn_output_type = 1; repeated ArrayRecord loss_fn_outputs = 2; map<string, double> metrics = 3;
}
message ArrayRecord { string type_tag = 1; map<string, BatchedTensor> fields = 2; int64 num_datums = 3; }
message BatchedTensor { bytes data = 1; bytes offsets = 2; DType dtype = 3; repeated int64 trailing_shape = 4; }
message SampleResponse {
  repeated SampledSequence sequences = 1; optional bytes prompt_logprobs = 2;
  optional TopkPromptLogprobs topk_prompt_logprobs = 3; int32 prompt_cache_hit_tokens = 4;
}
message SampledSequence { StopReason stop_reason = 1; bytes tokens = 2; optional bytes logprobs = 3; }
message TopkPromptLogprobs { bytes token_ids = 1; bytes logprobs = 2; uint32 k = 3; uint32 prompt_length = 4; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const FwdBwdRequestType = root.lookupType('tinker_public.ForwardBackwardRequest');
const FwdBwdOutputType = root.lookupType('tinker_public.ForwardBackwardOutput');
const SampleResponseType = root.lookupType('tinker_public.SampleResponse');

/** the media type of every protobuf body */
export const PROTO_CONTENT_TYPE = 'application/x-protobuf';

const DTYPE = { unspecified: 0, float32: 1, int64: 2, int32: 3, bfloat16: 4 } as const;
const STOP_REASONS = ['stop', 'length'] as const;

// ---- little-endian arrays --------------------------------------------------------------------

type ArrayKind = 'int32' | 'int64' | 'float32' | 'bfloat16';
const ITEM_SIZE: Record<ArrayKind, number> = { int32: 4, int64: 8, float32: 4, bfloat16: 2 };

export function packLE(values: readonly number[], kind: ArrayKind): Uint8Array {
  const out = new Uint8Array(values.length * ITEM_SIZE[kind]);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (kind === 'int32') view.setInt32(i * 4, v, true);
    else if (kind === 'int64') view.setBigInt64(i * 8, BigInt(v), true);
    else if (kind === 'float32') view.setFloat32(i * 4, v, true);
    // bfloat16 is the upper half of a float32; truncation is what a server writing it does
    else view.setUint16(i * 2, new Uint32Array(new Float32Array([v]).buffer)[0]! >>> 16, true);
  });
  return out;
}

export function unpackLE(raw: Uint8Array | readonly number[] | undefined | null, kind: ArrayKind): number[] {
  // protobufjs leaves an absent bytes field as its shared empty array
  const bytes = raw instanceof Uint8Array ? raw : new Uint8Array(raw ?? []);
  const size = ITEM_SIZE[kind];
  if (bytes.byteLength % size !== 0) {
    throw new RangeError(`a ${kind} array of ${bytes.byteLength} bytes is not a whole number of items`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.byteLength / size);
  const scratch = new DataView(new ArrayBuffer(4));
  for (let i = 0; i < out.length; i++) {
    if (kind === 'int32') out[i] = view.getInt32(i * 4, true);
    else if (kind === 'int64') out[i] = Number(view.getBigInt64(i * 8, true));
    else if (kind === 'float32') out[i] = view.getFloat32(i * 4, true);
    else {
      scratch.setUint32(0, view.getUint16(i * 2, true) << 16);
      out[i] = scratch.getFloat32(0);
    }
  }
  return out;
}

function sortedEntries<V>(map: Readonly<Record<string, V>>): [string, V][] {
  return Object.keys(map)
    .sort()
    .map((k) => [k, map[k]!]);
}

function sortedMap<V>(map: Readonly<Record<string, V>>): Record<string, V> {
  return Object.fromEntries(sortedEntries(map));
}

// ---- ForwardBackwardRequest ------------------------------------------------------------------

function chunkToProto(chunk: ModelInputChunk): Record<string, unknown> {
  if (chunk.type === 'encoded_text') return { encoded_text: { tokens: packLE(chunk.tokens, 'int32') } };
  return {
    image: {
      data: Buffer.from(chunk.data, 'base64'),
      format: chunk.format,
      ...(chunk.expected_tokens != null ? { expected_tokens: chunk.expected_tokens } : {}),
    },
  };
}

function tensorToProto(t: TensorData): Record<string, unknown> {
  const msg: Record<string, unknown> = {
    dtype: DTYPE[t.dtype],
    ...(t.shape != null ? { shape: [...t.shape] } : {}),
  };
  if (t.sparse_crow_indices != null) {
    if (t.sparse_col_indices == null) throw new RangeError('a sparse tensor needs sparse_col_indices');
    msg.sparse_csr = {
      values: packLE(t.data, t.dtype),
      crow_indices: packLE(t.sparse_crow_indices, 'int64'),
      col_indices: packLE(t.sparse_col_indices, 'int64'),
    };
  } else {
    msg.dense = packLE(t.data, t.dtype);
  }
  return msg;
}

/** The protobuf body of a forward_backward request (the JSON request's content, plus forward_only). */
export function encodeForwardBackwardRequest(
  req: ForwardBackwardRequestJson,
  forwardOnly: boolean,
): Uint8Array {
  const input = req.forward_backward_input;
  const msg = FwdBwdRequestType.fromObject({
    model_id: req.model_id,
    seq_id: req.seq_id,
    data: input.data.map((d) => ({
      model_input: d.model_input.chunks.map(chunkToProto),
      loss_fn_inputs: Object.fromEntries(
        sortedEntries(d.loss_fn_inputs).map(([k, t]) => [k, tensorToProto(t)]),
      ),
    })),
    loss_fn: input.loss_fn,
    loss_fn_config: sortedMap(input.loss_fn_config ?? {}),
    forward_only: forwardOnly,
  });
  return FwdBwdRequestType.encode(msg).finish();
}

interface DecodedTensor {
  dense?: Uint8Array;
  sparse_csr?: { values?: Uint8Array; crow_indices?: Uint8Array; col_indices?: Uint8Array };
  dtype?: number;
  shape?: number[];
}

function tensorFromProto(t: DecodedTensor, where: string): TensorData {
  const dtype: TensorDtype | undefined =
    t.dtype === DTYPE.float32 ? 'float32' : t.dtype === DTYPE.int64 ? 'int64' : undefined;
  if (!dtype)
    throw new RangeError(`${where}: a request tensor of dtype ${t.dtype} (float32 or int64 expected)`);
  const shape = t.shape && t.shape.length > 0 ? t.shape : null;
  if (t.sparse_csr) {
    return {
      data: unpackLE(t.sparse_csr.values, dtype),
      dtype,
      shape,
      sparse_crow_indices: unpackLE(t.sparse_csr.crow_indices, 'int64'),
      sparse_col_indices: unpackLE(t.sparse_csr.col_indices, 'int64'),
    };
  }
  return { data: unpackLE(t.dense, dtype), dtype, shape };
}

/** A protobuf forward_backward body back in the JSON form (what a server reads). */
export function decodeForwardBackwardRequest(bytes: Uint8Array): {
  request: ForwardBackwardRequestJson;
  forwardOnly: boolean;
} {
  const obj = FwdBwdRequestType.toObject(FwdBwdRequestType.decode(bytes), {
    longs: Number,
    defaults: true,
    arrays: true,
    objects: true,
  }) as {
    model_id: string;
    seq_id: number;
    loss_fn: string;
    loss_fn_config: Record<string, number>;
    forward_only: boolean;
    data: {
      model_input: {
        encoded_text?: { tokens: Uint8Array };
        image?: { data: Uint8Array; format: string; expected_tokens?: number };
      }[];
      loss_fn_inputs: Record<string, DecodedTensor>;
    }[];
  };
  const data: WireDatum[] = obj.data.map((d, i) => ({
    model_input: {
      chunks: d.model_input.map((c): ModelInputChunk => {
        if (c.encoded_text) return { type: 'encoded_text', tokens: unpackLE(c.encoded_text.tokens, 'int32') };
        if (c.image) {
          const format = c.image.format === 'png' ? 'png' : 'jpeg';
          return {
            type: 'image',
            data: Buffer.from(c.image.data).toString('base64'),
            format,
            ...(c.image.expected_tokens != null ? { expected_tokens: c.image.expected_tokens } : {}),
          };
        }
        throw new RangeError(`datum ${i}: a model_input chunk of a kind this decoder does not read`);
      }),
    },
    loss_fn_inputs: Object.fromEntries(
      Object.entries(d.loss_fn_inputs).map(([k, t]) => [k, tensorFromProto(t, `datum ${i} ${k}`)]),
    ),
  }));
  const config = obj.loss_fn_config;
  return {
    request: {
      model_id: obj.model_id,
      seq_id: obj.seq_id,
      forward_backward_input: {
        data,
        loss_fn: obj.loss_fn,
        loss_fn_config: Object.keys(config).length > 0 ? config : null,
      },
    },
    forwardOnly: obj.forward_only,
  };
}

// ---- ForwardBackwardOutput -------------------------------------------------------------------

interface DecodedBatchedTensor {
  data: Uint8Array;
  offsets: Uint8Array;
  dtype: number;
  trailing_shape: number[];
}

function batchedKind(dtype: number, field: string): ArrayKind {
  switch (dtype) {
    case DTYPE.float32:
      return 'float32';
    case DTYPE.int64:
      return 'int64';
    case DTYPE.int32:
      return 'int32';
    case DTYPE.bfloat16:
      return 'bfloat16';
    default:
      throw new RangeError(`forward_backward output field ${field} has an unknown dtype ${dtype}`);
  }
}

/**
 * A `ForwardBackwardOutput` body as the SDK decodes it: per datum, per field, `{data, dtype, shape}`
 * with bfloat16 widened to float32 and int32 to int64; records concatenate in order; the output
 * type is the bare class name (after the last ':') when there are outputs.
 */
export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const obj = FwdBwdOutputType.toObject(FwdBwdOutputType.decode(bytes), {
    longs: Number,
    defaults: true,
    arrays: true,
    objects: true,
  }) as {
    loss_fn_output_type: string;
    metrics: Record<string, number>;
    loss_fn_outputs: { type_tag: string; fields: Record<string, DecodedBatchedTensor>; num_datums: number }[];
  };
  const metrics = { ...obj.metrics };
  if (obj.loss_fn_outputs.length === 0) {
    return { loss_fn_output_type: obj.loss_fn_output_type || 'ArrayRecord', loss_fn_outputs: [], metrics };
  }
  const perField = new Map<string, { data: number[]; dtype: TensorDtype; trailing: number[] }[]>();
  for (const record of obj.loss_fn_outputs) {
    for (const [name, bt] of Object.entries(record.fields)) {
      const kind = batchedKind(bt.dtype, name);
      const values = unpackLE(bt.data, kind);
      const offsets = unpackLE(bt.offsets, 'int64');
      const size = ITEM_SIZE[kind];
      const dtype: TensorDtype = kind === 'int32' || kind === 'int64' ? 'int64' : 'float32';
      const list = perField.get(name) ?? [];
      for (let i = 0; i + 1 < offsets.length; i++) {
        list.push({
          data: values.slice(offsets[i]! / size, offsets[i + 1]! / size),
          dtype,
          trailing: bt.trailing_shape,
        });
      }
      perField.set(name, list);
    }
  }
  let numDatums = obj.loss_fn_outputs.reduce((s, r) => s + r.num_datums, 0);
  if (numDatums === 0 && perField.size > 0) numDatums = perField.values().next().value!.length;
  const outputs: LossFnOutput[] = [];
  for (let i = 0; i < numDatums; i++) {
    const datum: LossFnOutput = {};
    for (const [name, list] of perField) {
      const item = list[i];
      if (!item) throw new RangeError(`forward_backward output field ${name} has no datum ${i}`);
      const trailingElems = item.trailing.reduce((p, s) => p * s, 1);
      const leading = trailingElems ? Math.floor(item.data.length / trailingElems) : 0;
      datum[name] = { data: item.data, dtype: item.dtype, shape: [leading, ...item.trailing] };
    }
    outputs.push(datum);
  }
  return {
    loss_fn_output_type: obj.loss_fn_output_type.split(':').pop()!,
    loss_fn_outputs: outputs,
    metrics,
  };
}

/**
 * A `ForwardBackwardOutput` body (what a server writes): one ArrayRecord with every field batched,
 * float32 data (or bfloat16 when asked), byte offsets. Every datum must carry the same fields.
 */
export function encodeForwardBackwardOutput(
  out: ForwardBackwardOutput,
  opts: { typeTag?: string; floatDtype?: 'float32' | 'bfloat16' } = {},
): Uint8Array {
  const typeTag = opts.typeTag ?? out.loss_fn_output_type;
  const fields: Record<string, unknown> = {};
  const names = out.loss_fn_outputs.length > 0 ? Object.keys(out.loss_fn_outputs[0]!).sort() : [];
  for (const name of names) {
    const first = out.loss_fn_outputs[0]![name]!;
    const kind: ArrayKind = first.dtype === 'int64' ? 'int64' : (opts.floatDtype ?? 'float32');
    const flat: number[] = [];
    const offsets = [0];
    for (const datum of out.loss_fn_outputs) {
      const t = datum[name];
      if (!t) throw new RangeError(`every datum's output needs field ${name}`);
      flat.push(...t.data);
      offsets.push(flat.length * ITEM_SIZE[kind]);
    }
    fields[name] = {
      data: packLE(flat, kind),
      offsets: packLE(offsets, 'int64'),
      dtype: DTYPE[kind],
      trailing_shape: (first.shape ?? [first.data.length]).slice(1),
    };
  }
  const msg = FwdBwdOutputType.fromObject({
    loss_fn_output_type: typeTag,
    loss_fn_outputs:
      out.loss_fn_outputs.length > 0
        ? [{ type_tag: typeTag, fields, num_datums: out.loss_fn_outputs.length }]
        : [],
    metrics: sortedMap(out.metrics),
  });
  return FwdBwdOutputType.encode(msg).finish();
}

// ---- SampleResponse --------------------------------------------------------------------------

/**
 * A `SampleResponse` body as the SDK decodes it: empty logprobs bytes mean no logprobs (null), NaN
 * prompt logprobs are null (the first prompt token has none), top-k rows only when k and the
 * prompt length are both set.
 */
export function decodeSampleResponse(bytes: Uint8Array): SampleResponse {
  const msg = SampleResponseType.decode(bytes) as unknown as {
    sequences: { stop_reason?: number; tokens?: Uint8Array; logprobs?: Uint8Array }[];
    prompt_logprobs?: Uint8Array;
    topk_prompt_logprobs?: {
      token_ids?: Uint8Array;
      logprobs?: Uint8Array;
      k?: number;
      prompt_length?: number;
    };
    prompt_cache_hit_tokens?: number;
  };
  const sequences = msg.sequences.map((s, i) => {
    const stop = STOP_REASONS[s.stop_reason ?? 0];
    if (!stop) throw new RangeError(`sample sequence ${i} has an unknown stop_reason ${s.stop_reason}`);
    const logprobs = s.logprobs && s.logprobs.length > 0 ? unpackLE(s.logprobs, 'float32') : null;
    return { stop_reason: stop, tokens: unpackLE(s.tokens, 'int32'), logprobs };
  });
  const prompt =
    msg.prompt_logprobs && msg.prompt_logprobs.length > 0
      ? unpackLE(msg.prompt_logprobs, 'float32').map((v) => (Number.isNaN(v) ? null : v))
      : null;
  const out: SampleResponse = {
    sequences,
    prompt_logprobs: prompt,
    prompt_cache_hit_tokens: msg.prompt_cache_hit_tokens ?? 0,
  };
  const topk = msg.topk_prompt_logprobs;
  const n = topk?.prompt_length ?? 0;
  const k = topk?.k ?? 0;
  if (topk && n > 0 && k > 0) {
    const ids = unpackLE(topk.token_ids, 'int32');
    const lps = unpackLE(topk.logprobs, 'float32');
    out.topk_prompt_logprobs = Array.from({ length: n }, (_, row) =>
      Array.from({ length: k }, (_, j): [number, number] => [ids[row * k + j]!, lps[row * k + j]!]),
    );
  }
  return out;
}

/** A `SampleResponse` body (what a server writes); null prompt logprobs travel as NaN. */
export function encodeSampleResponse(res: SampleResponse): Uint8Array {
  const msg = SampleResponseType.fromObject({
    sequences: res.sequences.map((s) => ({
      stop_reason: s.stop_reason === 'length' ? 1 : 0,
      tokens: packLE(s.tokens, 'int32'),
      ...(s.logprobs ? { logprobs: packLE(s.logprobs, 'float32') } : {}),
    })),
    ...(res.prompt_logprobs
      ? {
          prompt_logprobs: packLE(
            res.prompt_logprobs.map((v) => v ?? Number.NaN),
            'float32',
          ),
        }
      : {}),
    prompt_cache_hit_tokens: res.prompt_cache_hit_tokens ?? 0,
  });
  return SampleResponseType.encode(msg).finish();
}
