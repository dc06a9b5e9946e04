/**
 * The native float32 backend: the matrix products of training in onnxruntime's CPU kernels (MLAS,
 * with the CPU's widest SIMD: AVX-512 or AVX2 where the WebAssembly kernels have 128-bit vectors),
 * everything else (attention, LayerNorm, GELU, the KV cache) in the WebAssembly ones of simd-ops.ts.
 *
 * onnxruntime-node is optional and never a dependency (its install script fetches GPU libraries
 * from outside the npm registry on Linux x64; the CPU library ships inside the package), so
 *
 *   npm install --no-save --ignore-scripts onnxruntime-node@1.30
 *
 * is what enables this backend. Its public API runs a session asynchronously, while every pass of
 * the model is synchronous; the binding underneath it is synchronous (the public `run` only defers
 * it), and a call costs ~7 us, so this backend calls the binding directly. That is a module inside
 * the package, not its documented API: loading checks what it uses and a product against the
 * WebAssembly kernels, and any mismatch leaves the backend unavailable with the reason.
 *
 * Each product is one run of a single-node Gemm model whose sizes are bound per run, on one intra-op
 * thread (training uses the cores through its gradient workers, one model each). Every row's sums
 * run in an order fixed by the shapes, so a seed gives the same updates on one machine, but not the
 * WebAssembly kernels' bits: models trained on the two backends differ at rounding level.
 * Decoding (rowwise products) stays on the WebAssembly kernels, so the prefix cache and batched
 * decoding keep their exactness if a native model ever samples.
 */
import { createRequire } from 'node:module';
import { gemmModel } from './onnx-model.js';
import type { MatShape, Ops } from './ops.js';
import { Pins } from './pins.js';
import { simdOps } from './simd-ops.js';

export const NATIVE_INSTALL_HINT = 'npm install --no-save --ignore-scripts onnxruntime-node@1.30';

/** what this backend uses of onnxruntime-node: its Tensor and its synchronous session binding */
interface OrtTensor {
  readonly dims: readonly number[];
}
interface OrtBinding {
  InferenceSession: new () => {
    loadModel(buffer: ArrayBufferLike, byteOffset: number, byteLength: number, options: object): void;
    run(feeds: Record<string, OrtTensor>, fetches: Record<string, OrtTensor>, options: object): unknown;
  };
}
interface OrtModules {
  readonly version: string;
  readonly Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => OrtTensor;
  readonly binding: OrtBinding;
}

/** onnxruntime-node's modules, or why they cannot be used */
function loadOrt(): OrtModules | string {
  const require = createRequire(import.meta.url);
  let version: string;
  let main: { Tensor?: unknown };
  let internal: { binding?: Partial<OrtBinding>; initOrt?: unknown };
  try {
    main = require('onnxruntime-node');
    internal = require('onnxruntime-node/dist/binding');
    version = (require('onnxruntime-node/package.json') as { version: string }).version;
  } catch (e) {
    const missing = (e as { code?: string }).code === 'MODULE_NOT_FOUND';
    return missing
      ? `onnxruntime-node is not installed (${NATIVE_INSTALL_HINT})`
      : `onnxruntime-node did not load: ${(e as Error).message}`;
  }
  if (typeof main.Tensor !== 'function' || typeof internal.initOrt !== 'function')
    return `onnxruntime-node ${version} has no Tensor or initOrt where 1.30 has them`;
  if (typeof internal.binding?.InferenceSession !== 'function')
    return `onnxruntime-node ${version} has no synchronous InferenceSession binding where 1.30 has it`;
  (internal.initOrt as () => void)();
  return { version, Tensor: main.Tensor as OrtModules['Tensor'], binding: internal.binding as OrtBinding };
}

/** a product's transposes, and what Gemm adds to it: a bias row, or (TN+acc) a whole matrix */
type Layout = 'NN' | 'NN+bias' | 'NT' | 'TN+acc';

function nativeOpsFrom(ort: OrtModules): Ops<Float32Array> {
  const sessions = new Map<Layout, InstanceType<OrtBinding['InferenceSession']>>();
  const session = (layout: Layout) => {
    let s = sessions.get(layout);
    if (!s) {
      s = new ort.binding.InferenceSession();
      const model = gemmModel({
        transA: layout === 'TN+acc',
        transB: layout === 'NT',
        add: layout === 'NN+bias' ? 'row' : layout === 'TN+acc' ? 'matrix' : 'none',
      });
      s.loadModel(model.buffer, model.byteOffset, model.byteLength, {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
      });
      sessions.set(layout, s);
    }
    return s;
  };
  // The binding takes no array in shared memory, where the gradient workers' weights are: a
  // pinned shared array is copied once into memory of this thread's own, and its views are read
  // there (weights do not change while pinned); any other shared operand is copied for its call.
  // Other arrays are read where they are, pinned or not.
  const pins = new Pins((array) => ({ array, copy: array.slice() }));
  const unpinned = () => {};
  const readable = (x: Float32Array, n: number): Float32Array => {
    if (!(x.buffer instanceof SharedArrayBuffer)) return x.length === n ? x : x.subarray(0, n);
    for (const p of pins.held) {
      const at = (x.byteOffset - p.array.byteOffset) / 4;
      if (x.buffer === p.array.buffer && at >= 0 && at + n <= p.array.length)
        return p.copy.subarray(at, at + n);
    }
    return x.slice(0, n);
  };
  const tensor = (x: Float32Array, rows: number, cols: number) =>
    new ort.Tensor('float32', readable(x, rows * cols), [rows, cols]);
  const noOptions = {};
  /** what a product writes where its output cannot be (shared memory, or its own addend) */
  let spare = new Float32Array(0);
  /**
   * out [m, n] = op(a) @ op(b) + add, where add is a bias row (NN+bias) or out itself (TN+acc),
   * written in place
   */
  const gemm = (
    layout: Layout,
    out: Float32Array,
    a: Float32Array,
    b: Float32Array,
    bias: Float32Array | null,
    s: MatShape,
  ) => {
    const { m, k, n } = s;
    if (m === 0 || n === 0) return;
    const feeds: Record<string, OrtTensor> = {
      A: layout === 'TN+acc' ? tensor(a, k, m) : tensor(a, m, k),
      B: layout === 'NT' ? tensor(b, n, k) : tensor(b, k, n),
    };
    if (bias) feeds.C = new ort.Tensor('float32', readable(bias, n), [n]);
    // Gemm's output cannot be its addend: the sum lands apart and is copied back
    if (layout === 'TN+acc') feeds.C = tensor(out, m, n);
    const apart = layout === 'TN+acc' || out.buffer instanceof SharedArrayBuffer;
    if (apart && spare.length < m * n) spare = new Float32Array(m * n);
    const y = (apart ? spare : out).subarray(0, m * n);
    session(layout).run(feeds, { Y: new ort.Tensor('float32', y, [m, n]) }, noOptions);
    if (apart) out.set(y);
  };
  return {
    ...simdOps,
    matmul: (out, a, w, bias, s) =>
      s.k === 0 ? simdOps.matmul(out, a, w, bias, s) : gemm(bias ? 'NN+bias' : 'NN', out, a, w, bias, s),
    matmulNT: (out, a, w, s) =>
      s.rowwise || s.k === 0 ? simdOps.matmulNT(out, a, w, s) : gemm('NT', out, a, w, null, s),
    // g [k, n] += a^T @ d, with a [m, k] and d [m, n]
    matmulTNAcc: (g, a, d, s) =>
      s.m === 0 ? undefined : gemm('TN+acc', g, a, d, null, { m: s.k, k: s.m, n: s.n }),
    pin: (array) => (array.buffer instanceof SharedArrayBuffer ? pins.hold(array) : unpinned),
  };
}

/**
 * Compares a product of each layout with the WebAssembly kernels' (close, not equal: the sums
 * round differently), so that a binding that reads or writes elsewhere than asked is caught at load
 */
function selfCheck(ops: Ops<Float32Array>): string | null {
  const [m, k, n] = [5, 7, 3];
  // views that start inside their buffers, as a model's weights do
  const fill = (len: number, seed: number) =>
    Float32Array.from({ length: len + 3 }, (_, i) => (((i + 1) * seed) % 17) / 8 - 1).subarray(3);
  const a = fill(m * k, 3);
  const w = fill(k * n, 5);
  const wt = fill(n * k, 7);
  const bias = fill(n, 11);
  const d = fill(m * n, 13);
  const cases: [string, (out: Float32Array, o: Ops<Float32Array>) => void, number][] = [
    ['a @ w + bias', (out, o) => o.matmul(out, a, w, bias, { m, k, n }), m * n],
    ['a @ w^T', (out, o) => o.matmulNT(out, a, wt, { m, k, n }), m * n],
    [
      'g + a^T @ d',
      (out, o) => {
        out.fill(0.5);
        o.matmulTNAcc(out, a, d, { m, k, n });
      },
      k * n,
    ],
  ];
  for (const [name, run, len] of cases) {
    const got = new Float32Array(len);
    const want = new Float32Array(len);
    run(got, ops);
    run(want, simdOps);
    for (let i = 0; i < len; i++)
      if (!(Math.abs(got[i]! - want[i]!) <= 1e-5 * (1 + Math.abs(want[i]!))))
        return `onnxruntime-node's ${name} differs from the WebAssembly kernels' (${got[i]} against ${want[i]})`;
  }
  return null;
}

let loaded: { readonly ops: Ops<Float32Array>; readonly version: string } | string | undefined;

/**
 * The native backend, loaded on first call (once per thread), or the reason it is unavailable
 * (not installed, or an onnxruntime-node whose binding this backend does not know)
 */
export function nativeOps(): { readonly ops: Ops<Float32Array>; readonly version: string } | string {
  if (loaded === undefined) {
    const ort = loadOrt();
    if (typeof ort === 'string') loaded = ort;
    else {
      try {
        const ops = nativeOpsFrom(ort);
        const wrong = selfCheck(ops);
        loaded = wrong ?? { ops, version: ort.version };
      } catch (e) {
        loaded = `onnxruntime-node ${ort.version} failed a product: ${(e as Error).message}`;
      }
    }
  }
  return loaded;
}
