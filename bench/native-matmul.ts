/**
 * The native fp32 matmul ceiling of this machine, from onnxruntime-node when it is installed. It is
 * never a dependency: its install script fetches GPU libraries from outside the npm registry on
 * Linux x64, while the CPU library it needs here ships inside the npm package, so
 *
 *   npm install --no-save --ignore-scripts onnxruntime-node@1.30
 *
 * installs what this measurement uses without running that script (and without touching
 * package.json or the lock file).
 */
import { matmulModel } from '../src/nn/onnx-model.js';

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

export async function loadOrt(): Promise<Ort | undefined> {
  const name = 'onnxruntime-node'; // a variable, so the type checker does not look for the package
  try {
    return (await import(name)) as Ort;
  } catch {
    return undefined;
  }
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
