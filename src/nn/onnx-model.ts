/**
 * A minimal ONNX protobuf writer: models of a single matrix-product node (MatMul or Gemm) over float
 * tensors, which is all the native kernels (native-ops.ts) and the benchmark's native ceiling run.
 * Field numbers are those of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto,
 * ValueInfoProto, TypeProto.Tensor, TensorShapeProto.Dimension).
 */

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}
const field = (no: number, wire: number) => varint(no * 8 + wire);
const int = (no: number, v: number) => [...field(no, 0), ...varint(v)];
const bytes = (no: number, b: number[]) => [...field(no, 2), ...varint(b.length), ...b];
const str = (no: number, s: string) => bytes(no, [...new TextEncoder().encode(s)]);

/** a dimension: a fixed size, or a name that each run binds to the size of its inputs */
export type Dim = number | string;

/** ValueInfoProto of a float tensor */
function tensorInfo(name: string, dims: readonly Dim[]): number[] {
  const shape = dims.flatMap((d) => bytes(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  const tensorType = [...int(1, 1 /* FLOAT */), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

/** an INT attribute of a node */
const intAttribute = (name: string, v: number) => bytes(5, [...str(1, name), ...int(3, v), ...int(20, 2)]);

interface NodeSpec {
  readonly op: 'MatMul' | 'Gemm';
  readonly inputs: readonly (readonly [string, readonly Dim[]])[];
  readonly output: readonly [string, readonly Dim[]];
  readonly attributes?: Readonly<Record<string, number>>;
}

function singleNodeModel(spec: NodeSpec): Uint8Array {
  const node = [
    ...spec.inputs.flatMap(([name]) => str(1, name)),
    ...str(2, spec.output[0]),
    ...str(4, spec.op),
    ...Object.entries(spec.attributes ?? {}).flatMap(([k, v]) => intAttribute(k, v)),
  ];
  const graph = [
    ...bytes(1, node),
    ...str(2, spec.op.toLowerCase()),
    ...spec.inputs.flatMap(([name, dims]) => bytes(11, tensorInfo(name, dims))),
    ...bytes(12, tensorInfo(...spec.output)),
  ];
  const opset = [...str(1, ''), ...int(2, 13)];
  return Uint8Array.from([...int(1, 8 /* IR version */), ...bytes(8, opset), ...bytes(7, graph)]);
}

/** C [M, N] = A [M, K] @ B [K, N] */
export function matmulModel(M: Dim, K: Dim, N: Dim): Uint8Array {
  return singleNodeModel({
    op: 'MatMul',
    inputs: [
      ['A', [M, K]],
      ['B', [K, N]],
    ],
    output: ['C', [M, N]],
  });
}

/**
 * Y [m, n] = op(A) @ op(B) (+ C), op a transpose where asked, for any m, k and n: A is [m, k] or,
 * transposed, [k, m]; B is [k, n] or [n, k]; C, when added, a row [n] broadcast over the rows or
 * a whole [m, n]
 */
export function gemmModel(opts: {
  readonly transA: boolean;
  readonly transB: boolean;
  readonly add: 'none' | 'row' | 'matrix';
}): Uint8Array {
  const a: Dim[] = opts.transA ? ['k', 'm'] : ['m', 'k'];
  const b: Dim[] = opts.transB ? ['n', 'k'] : ['k', 'n'];
  const c: Dim[] | null = opts.add === 'row' ? ['n'] : opts.add === 'matrix' ? ['m', 'n'] : null;
  return singleNodeModel({
    op: 'Gemm',
    inputs: [['A', a], ['B', b], ...(c ? [['C', c] as const] : [])],
    output: ['Y', ['m', 'n']],
    attributes: { transA: opts.transA ? 1 : 0, transB: opts.transB ? 1 : 0 },
  });
}
