/**
 * The native fp32 matmul ceiling of this machine, from onnxruntime-node when it is installed. It is
 * never a dependency: its install script fetches GPU libraries from outside the npm registry on
 * Linux x64, while the CPU library it needs here ships inside the npm package, so
 *
 *   npm install --no-save --ignore-scripts onnxruntime-node
 *
 * installs what this measurement uses without running that script (and without touching
 * package.json or the lock file).
 */

/** the slice of onnxruntime-node's API used here */
interface Ort {
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => unknown;
  InferenceSession: {
    create(
      model: Uint8Array,
      options: { intraOpNumThreads: number; interOpNumThreads: number; executionMode: 'sequential' },
    ): Promise<{ run(feeds: Record<string, unknown>): Promise<unknown>; release(): Promise<void> }>;
  };
}

export const NATIVE_INSTALL_HINT = 'npm install --no-save --ignore-scripts onnxruntime-node';

export async function loadOrt(): Promise<Ort | undefined> {
  const name = 'onnxruntime-node'; // a variable, so the type checker does not look for the package
  try {
    return (await import(name)) as Ort;
  } catch {
    return undefined;
  }
}

// --- a minimal ONNX protobuf writer: just enough for one MatMul node -------------------------------

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

/** ValueInfoProto of a float tensor with the given dims */
function tensorInfo(name: string, dims: number[]): number[] {
  const shape = dims.flatMap((d) => bytes(1, int(1, d)));
  const tensorType = [...int(1, 1 /* FLOAT */), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

/** a model computing C[M,N] = A[M,K] @ B[K,N] */
function matmulModel(M: number, K: number, N: number): Uint8Array {
  const node = [...str(1, 'A'), ...str(1, 'B'), ...str(2, 'C'), ...str(4, 'MatMul')];
  const graph = [
    ...bytes(1, node),
    ...str(2, 'matmul'),
    ...bytes(11, tensorInfo('A', [M, K])),
    ...bytes(11, tensorInfo('B', [K, N])),
    ...bytes(12, tensorInfo('C', [M, N])),
  ];
  const opset = [...str(1, ''), ...int(2, 13)];
  return Uint8Array.from([...int(1, 8), ...bytes(8, opset), ...bytes(7, graph)]);
}

/**
 * GFLOP/s of onnxruntime's MatMul at [M,K] @ [K,N] on `threads` intra-op threads (median of five
 * timed runs of enough calls for ~4e8 FLOPs each, after a warm-up): per second of wall time and per
 * second of the process's CPU time (on two threads that is per core).
 */
export async function nativeMatmulGflops(
  ort: Ort,
  M: number,
  K: number,
  N: number,
  threads: number,
): Promise<{ wall: number; cpu: number }> {
  const session = await ort.InferenceSession.create(matmulModel(M, K, N), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const fill = (n: number) => Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 101) / 50 - 1);
  const feeds = {
    A: new ort.Tensor('float32', fill(M * K), [M, K]),
    B: new ort.Tensor('float32', fill(K * N), [K, N]),
  };
  const flops = 2 * M * K * N;
  const reps = Math.max(1, Math.round(4e8 / flops));
  for (let i = 0; i < 3; i++) await session.run(feeds);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < reps; i++) await session.run(feeds);
    const c = process.cpuUsage(c0);
    wall.push((performance.now() - t0) / 1000);
    cpu.push((c.user + c.system) / 1e6);
  }
  await session.release();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
  return { wall: (flops * reps) / median(wall) / 1e9, cpu: (flops * reps) / median(cpu) / 1e9 };
}
