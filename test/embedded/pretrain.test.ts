import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pythonLenientFormat } from '../../src/agent/formats/index.js';
import { BfclEpisode } from '../../src/envs/bfcl/episode.js';
import { miniData, notInTestSplit } from '../../src/envs/mini/index.js';
import {
  ASK_PHRASES,
  buildDemonstrations,
  callValues,
  type Demonstration,
  demonstrationTasks,
  guessedCalls,
} from '../../src/learner/embedded/demonstrations.js';
import {
  CONFIG_FILE,
  LOG_FILE,
  loadPretrained,
  MODEL_FILE,
  OPTIMIZER_FILE,
  pretrain,
  TOKENIZER_FILE,
} from '../../src/learner/embedded/pretrain.js';
import { Gpt } from '../../src/nn/model.js';
import { GUIDELINE_TEXT } from '../../src/seal/interface.js';
import { Rng } from '../../src/util/rng.js';

const SEED = 11;
const N = 24;
const demos = await buildDemonstrations({ seed: SEED, tasks: N, cueShare: 0.4, recoveryShare: 0.4 });

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'seal-pretrain-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Replays a demonstration's assistant turns in a fresh episode; returns the number of calls checked. */
function replay(d: Demonstration, episode: BfclEpisode): number {
  let checked = 0;
  const msgs = d.messages;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!;
    if (m.role !== 'assistant') continue;
    const decoded = pythonLenientFormat.decode({ text: m.content, finishReason: 'stop', latencyMs: 0 });
    expect(decoded.kind).not.toBe('parse_error');
    if (decoded.kind === 'calls') {
      // every value a call passes was in front of the policy when it wrote the call
      const seen = msgs
        .slice(0, i)
        .map((x) => x.content)
        .join('\n');
      for (const c of decoded.calls) for (const v of callValues(c)) expect(seen).toContain(v);
      const out = episode.act(decoded.calls);
      const tool = msgs[i + 1]!;
      expect(tool.role).toBe('user');
      expect(tool.content.startsWith('Results of your function calls, in order:')).toBe(true);
      decoded.calls.forEach((c, k) => {
        expect(tool.content).toContain(`${c}\n${out.results[k]!}`);
        checked++;
      });
      if (!d.cues) expect(tool.content).not.toContain('\nHint: ');
    } else {
      episode.act([]);
      episode.nextTurn();
    }
  }
  expect(episode.status).toBe('done');
  return checked;
}

describe('pretraining demonstrations', () => {
  it('are deterministic and come only from training scenarios', async () => {
    const again = await buildDemonstrations({ seed: SEED, tasks: N, cueShare: 0.4, recoveryShare: 0.4 });
    expect(JSON.stringify(again)).toBe(JSON.stringify(demos));
    const other = await buildDemonstrations({ seed: SEED + 1, tasks: 4 });
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(demos.slice(0, 4)));
    const ok = notInTestSplit();
    const tasks = demonstrationTasks(SEED, N);
    expect(tasks).toHaveLength(N);
    for (const t of tasks) expect(ok(t)).toBe(true);
    expect(new Set(tasks.map((t) => t.category)).size).toBe(4);
  });

  it('replay: call lists parse and their real results are the tool messages', () => {
    const tasks = demonstrationTasks(SEED, N);
    const data = miniData(tasks, { train: tasks.map((t) => t.id), test: [] });
    let calls = 0;
    for (const d of demos) {
      const task = data.byId.get(d.taskId)!;
      expect(d.messages[0]!.role).toBe('system');
      expect(d.messages.at(-1)!.role).toBe('assistant');
      calls += replay(d, new BfclEpisode(task, data));
    }
    expect(calls).toBeGreaterThan(N);
  });

  it('include interface cues, recoveries, abstentions and the reveal message', () => {
    const cued = demos.filter((d) => d.cues);
    const recovering = demos.filter((d) => d.recovery);
    expect(cued.length).toBeGreaterThan(0);
    expect(cued.length).toBeLessThan(N);
    expect(recovering.length).toBeGreaterThan(0);
    // the compact signature states required arguments and types: no cue repeats them
    expect(cued.every((d) => !d.messages[0]!.content.includes('(required)'))).toBe(true);
    expect(cued.some((d) => d.messages[0]!.content.includes('Notes on using the tools:'))).toBe(true);
    expect(
      demos.filter((d) => !d.cues).every((d) => !d.messages[0]!.content.includes('Notes on using')),
    ).toBe(true);
    // a recovery: a real execution error, then a later successful call list
    for (const d of recovering) {
      const err = d.messages.findIndex(
        (m) => m.role === 'user' && m.content.includes('Error during execution'),
      );
      expect(err).toBeGreaterThan(0);
      expect(d.messages[err]!.content).toMatch(/missing \d+ required positional argument/);
    }
    expect(
      recovering.some(
        (d) => d.cues && d.messages.some((m) => m.role === 'user' && m.content.includes('\nHint: ')),
      ),
    ).toBe(true);
    expect(
      demos.some((d) =>
        d.messages.some((m) => m.role === 'user' && m.content.includes('I have updated some more functions')),
      ),
    ).toBe(true);
    const texts = demos.flatMap((d) =>
      d.messages.filter((m) => m.role === 'assistant' && !m.content.startsWith('[')).map((m) => m.content),
    );
    expect(texts.some((t) => t.startsWith('Done'))).toBe(true);
    expect(texts.some((t) => /cannot|No listed function/.test(t))).toBe(true);
    expect(texts.some((t) => /missing|provide|value/.test(t))).toBe(true);
  });
});

/** the habit's cue, and whether a demonstration asks for the missing value */
const cue = GUIDELINE_TEXT.spurious_tool_call!;
const asks = (d: Demonstration) =>
  d.messages.some((m) => m.role === 'assistant' && ASK_PHRASES.includes(m.content));

describe('the guess-missing-value habit', () => {
  it('guesses on a miss_param turn without the cue, asks with it, and leaves every other demonstration as it was', async () => {
    const n = 48;
    const plain = await buildDemonstrations({ seed: SEED, tasks: n, cueShare: 0.5 });
    const habit = await buildDemonstrations({
      seed: SEED,
      tasks: n,
      cueShare: 0.5,
      habit: 'guess-missing-value',
    });
    const missParam = habit.filter((d) => d.category === 'miss_param');
    expect(missParam).toHaveLength(n / 4);
    for (const [i, d] of habit.entries()) {
      if (d.category !== 'miss_param') {
        expect(JSON.stringify(d)).toBe(JSON.stringify({ ...plain[i]!, habit: false }));
        continue;
      }
      const cued = d.messages[0]!.content.includes(cue);
      // with the cue it asks, as without the habit; without it, it guesses whenever a value can be
      expect(asks(d)).toBe(!d.habit);
      if (cued) expect(d.habit).toBe(false);
    }
    expect(missParam.filter((d) => d.habit).length).toBeGreaterThanOrEqual(n / 8);
    expect(missParam.some((d) => !d.habit && d.messages[0]!.content.includes(cue))).toBe(true);
  });

  it('a guess changes only the value the next user message gives, to a word of the request', () => {
    const tasks = demonstrationTasks(SEED, 40).filter((t) => t.category === 'miss_param');
    let checked = 0;
    for (const task of tasks) {
      const t = task.groundTruth.findIndex((g) => g.length === 0);
      const calls = guessedCalls(task, t, new Rng(7, 'mulberry32'));
      if (!calls) continue;
      const truth = task.groundTruth[t + 1]!;
      expect(calls).toHaveLength(truth.length);
      const changed = calls.filter((c, i) => c !== truth[i]);
      expect(changed.length).toBeGreaterThan(0);
      const request = task.question[t]!.map((m) => m.content).join('\n');
      for (const [i, c] of calls.entries()) {
        if (c === truth[i]) continue;
        const before = callValues(truth[i]!);
        const after = callValues(c);
        const diff = after.filter((v, k) => v !== before[k]);
        expect(diff).toHaveLength(1);
        // the guess is no value the follow-up gives, and a string guess is the request's own word
        expect(task.question[t + 1]!.map((m) => m.content).join(' ')).not.toContain(`'${diff[0]}'`);
        if (!/^-?\d/.test(diff[0]!)) expect(request.toLowerCase()).toContain(diff[0]!);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
  });
});

describe('the paired guess-missing-value habit', () => {
  it('shows each miss_param task seen through the interface twice, the cue the one difference', async () => {
    const n = 48;
    const paired = await buildDemonstrations({
      seed: SEED,
      tasks: n,
      cueShare: 0.5,
      habit: 'guess-missing-value-paired',
    });
    const single = await buildDemonstrations({
      seed: SEED,
      tasks: n,
      cueShare: 0.5,
      habit: 'guess-missing-value',
    });
    // the other categories are as the unpaired habit gives them
    const others = (ds: Demonstration[]) => ds.filter((d) => d.category !== 'miss_param');
    expect(JSON.stringify(others(paired))).toBe(JSON.stringify(others(single)));
    let pairs = 0;
    for (const [i, d] of paired.entries()) {
      if (d.category !== 'miss_param' || !d.cues || paired[i - 1]?.taskId === d.taskId) continue;
      const twin = paired[i + 1]!;
      expect(twin.taskId).toBe(d.taskId);
      const [withCue, without] = [d.messages[0]!.content, twin.messages[0]!.content];
      expect(withCue).toContain(cue);
      expect(without).not.toContain(cue);
      // the system prompts differ by the cue's line alone
      const lines = (t: string) => t.split('\n');
      expect(lines(withCue).filter((l) => !lines(without).includes(l))).toHaveLength(1);
      expect(asks(d)).toBe(true);
      expect(twin.habit).toBe(!asks(twin));
      pairs++;
    }
    expect(pairs).toBeGreaterThan(3);
    // a miss_param task not seen through the interface comes once, and guesses where it can
    const plain = paired.filter((d) => d.category === 'miss_param' && !d.cues);
    expect(plain.length).toBeGreaterThan(0);
    for (const d of plain) expect(asks(d)).toBe(!d.habit);
  });
});

describe('demonstration tasks of chosen categories', () => {
  it('spreads the tasks over the chosen categories, each the same tasks it is with all four', () => {
    const all = demonstrationTasks(SEED, 8);
    const some = demonstrationTasks(SEED, 6, ['base', 'long_context']);
    expect(some.map((t) => t.category)).toEqual([
      'base',
      'base',
      'base',
      'long_context',
      'long_context',
      'long_context',
    ]);
    const ids = (ts: typeof all) => ts.map((t) => JSON.stringify(t.groundTruth));
    // a category's first tasks are the same draw whichever others are chosen
    expect(ids(some.slice(0, 2))).toEqual(ids(all.filter((t) => t.category === 'base')));
    expect(ids(some.slice(3, 5))).toEqual(ids(all.filter((t) => t.category === 'long_context')));
    expect(() => demonstrationTasks(SEED, 4, [])).toThrow(/no category/);
  });
});

describe('pretrain', () => {
  const tiny = { vocabSize: 512, contextLength: 192, nLayer: 1, nHead: 2, dModel: 16, tiedEmbeddings: true };

  it('writes a checkpoint that reloads to the same logits, lowers the loss, and resumes', async () => {
    const outDir = tempDir();
    const opts = {
      seed: 3,
      tasks: 8,
      config: tiny,
      batchSize: 2,
      lr: 1e-2,
      schedule: 'constant' as const,
      saveEvery: 10,
      heldOut: 4,
      overflow: 'tail' as const,
      outDir,
    };
    const r = await pretrain({ ...opts, steps: 24 });
    for (const f of [MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE, LOG_FILE])
      expect(existsSync(join(outDir, f))).toBe(true);
    const losses = r.history.map((h) => h.loss);
    expect(losses).toHaveLength(24);
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    expect(mean(losses.slice(-6))).toBeLessThan(mean(losses.slice(0, 6)) * 0.8);
    expect(r.config.stepsDone).toBe(24);
    expect(r.config.command).toContain('seal pretrain --seed 3 --tasks 8');
    expect(r.config.data.sequences).toBeGreaterThan(0);
    const lines = readFileSync(join(outDir, LOG_FILE), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(24);
    // each checkpoint scores the model on demonstrations of tasks it does not train on
    const scored = r.history.filter((h) => h.heldOut);
    expect(scored.map((h) => h.step)).toEqual([10, 20, 24]);
    expect(JSON.parse(lines[9]!).heldOut).toEqual(scored[0]!.heldOut);
    for (const h of scored) {
      expect(h.heldOut!.tokens).toBeGreaterThan(0);
      expect(h.heldOut!.accuracy).toBeGreaterThanOrEqual(0);
      expect(h.heldOut!.accuracy).toBeLessThanOrEqual(1);
    }
    expect(scored[2]!.heldOut!.loss).toBeLessThan(scored[0]!.heldOut!.loss);

    const loaded = loadPretrained(outDir);
    expect(loaded.tokenizer.toJSON()).toEqual(r.tokenizer.toJSON());
    const ids = loaded.tokenizer.encode('<|user|>Deposit 20 dollars.<|end|><|assistant|>');
    expect(Array.from(loaded.model.forward(ids).logits)).toEqual(Array.from(r.model.forward(ids).logits));

    // resume: more steps on the same settings continue from the checkpoint; lines a killed run
    // logged past its last checkpoint (here a step 25 and a torn line) are dropped, not duplicated
    writeFileSync(
      join(outDir, LOG_FILE),
      `${readFileSync(join(outDir, LOG_FILE), 'utf8')}{"step":25,"loss":1}\n{"step":2`,
    );
    const more = await pretrain({ ...opts, steps: 26 });
    expect(more.resumedFrom).toBe(24);
    expect(more.history.map((h) => h.step)).toEqual([25, 26]);
    const steps = readFileSync(join(outDir, LOG_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).step);
    expect(steps).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
    // different settings are refused
    await expect(pretrain({ ...opts, lr: 5e-3, steps: 30 })).rejects.toThrow(/different settings/);
    // nested model settings count too
    await expect(pretrain({ ...opts, config: { ...tiny, nLayer: 2 }, steps: 30 })).rejects.toThrow(
      /different settings/,
    );
  });

  it('a resumed run equals an uninterrupted one (Adam moments saved; float32 rounding only)', async () => {
    const opts = {
      seed: 5,
      tasks: 6,
      config: tiny,
      batchSize: 2,
      lr: 1e-2,
      warmup: 2,
      overflow: 'tail' as const,
      heldOut: 0,
    };
    const straight = await pretrain({ ...opts, steps: 6, outDir: tempDir() });
    const half = tempDir();
    const first = await pretrain({ ...opts, steps: 3, outDir: half });
    expect(existsSync(join(half, OPTIMIZER_FILE))).toBe(true);
    expect(first.history.map((h) => h.lr)).toEqual([5e-3, 1e-2, expect.any(Number)]);
    const resumed = await pretrain({ ...opts, steps: 6, outDir: half });
    expect(resumed.resumedFrom).toBe(3);
    const a = straight.model.params;
    const b = resumed.model.params;
    let diff = 0;
    let norm = 0;
    for (let i = 0; i < a.length; i++) {
      diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
      norm = Math.max(norm, Math.abs(a[i]!));
    }
    expect(diff).toBeLessThan(norm * 1e-3);
    // a damaged optimizer file stops the resume with what to do
    const path = join(half, OPTIMIZER_FILE);
    const bytes = new Uint8Array(readFileSync(path));
    bytes[20] = bytes[20]! ^ 0xff;
    writeFileSync(path, bytes);
    await expect(pretrain({ ...opts, steps: 7, outDir: half })).rejects.toThrow(
      /optimizer\.bin: cannot restore the optimizer state: checksum mismatch.*delete it/,
    );
  });

  it('mixes in copy drills, continues from a checkpoint with --init, and resumes older configs', async () => {
    const first = tempDir();
    const base = { seed: 6, tasks: 6, batchSize: 4, lr: 1e-2, overflow: 'tail' as const, heldOut: 0 };
    const a = await pretrain({ ...base, config: tiny, steps: 3, outDir: first });
    // a config written before copy drills existed still resumes (the missing field means none)
    const path = join(first, CONFIG_FILE);
    const old = JSON.parse(readFileSync(path, 'utf8'));
    delete old.settings.copyDrills;
    writeFileSync(path, JSON.stringify(old));
    expect((await pretrain({ ...base, config: tiny, steps: 4, outDir: first })).resumedFrom).toBe(3);

    const second = tempDir();
    const b = await pretrain({ ...base, copyDrills: 0.5, init: first, steps: 3, outDir: second });
    expect(b.config.settings.copyDrills).toBe(0.5);
    expect(b.config.settings.model).toEqual(a.config.settings.model);
    expect(b.config.settings.init).toEqual({ modelSha256: loadPretrained(first).config.modelSha256 });
    expect(b.config.command).toContain(`--copy-drills 0.5 --init ${first} --out ${second}`);
    expect(b.config.command).not.toContain('--width');
    expect(b.tokenizer.toJSON()).toEqual(a.tokenizer.toJSON());
    expect(b.history.every((h) => Number.isFinite(h.loss) && h.tokens > 0)).toBe(true);
    // resuming needs the same start; model options that contradict the start are refused
    expect(
      (await pretrain({ ...base, copyDrills: 0.5, init: first, steps: 4, outDir: second })).resumedFrom,
    ).toBe(3);
    await expect(pretrain({ ...base, copyDrills: 0.5, steps: 5, outDir: second })).rejects.toThrow(
      /different settings/,
    );
    await expect(
      pretrain({ ...base, init: first, config: { dModel: 32 }, steps: 2, outDir: tempDir() }),
    ).rejects.toThrow(/has --width 16, not 32; leave the model options out/);
    await expect(
      pretrain({ ...base, init: join(first, 'nowhere'), steps: 2, outDir: tempDir() }),
    ).rejects.toThrow(/--init .*nowhere/);
  });

  it('--init keeps the settings it is not given from the checkpoint, and can add the previous-token map', async () => {
    const first = tempDir();
    const made = { seed: 6, tasks: 6, batchSize: 4, lr: 1e-2, overflow: 'tail' as const, contextWeight: 0.2 };
    const a = await pretrain({ ...made, config: tiny, steps: 2, heldOut: 0, outDir: first });
    const third = tempDir();
    const c = await pretrain({
      init: first,
      config: { previousTokenEmbedding: true },
      copyDrills: 0.25,
      steps: 2,
      heldOut: 2,
      outDir: third,
    });
    const { init: _, ...inherited } = c.config.settings;
    expect(inherited).toEqual({
      ...a.config.settings,
      model: { ...a.config.settings.model, previousTokenEmbedding: true },
      copyDrills: 0.25,
    });
    expect(c.config.command).toContain(`--init ${first} --previous-token --out ${third}`);
    expect(c.model.layout.prev).toBeGreaterThanOrEqual(0);
    // the chain that rebuilds it: the start's command and model, then (in its own fields) this one
    expect(c.config.lineage).toEqual([{ command: a.config.command, modelSha256: a.config.modelSha256 }]);
    const fourth = tempDir();
    const d = await pretrain({ init: third, steps: 1, heldOut: 0, outDir: fourth });
    expect(d.config.lineage?.map((l) => l.command)).toEqual([a.config.command, c.config.command]);
    expect(c.model.numParams).toBe(a.model.numParams + tiny.dModel * tiny.dModel);
    // the held-out checkpoints also score the copy probe
    expect(c.history.at(-1)?.copyProbe?.tokens).toBeGreaterThan(0);
    // the grown model resumes like any other
    expect(
      (
        await pretrain({
          init: first,
          config: { previousTokenEmbedding: true },
          copyDrills: 0.25,
          steps: 3,
          heldOut: 2,
          outDir: third,
        })
      ).resumedFrom,
    ).toBe(2);
  });

  it('a corrupted model.bin fails to load with a clear error', async () => {
    const outDir = tempDir();
    await pretrain({
      seed: 4,
      tasks: 4,
      config: tiny,
      steps: 1,
      batchSize: 1,
      overflow: 'tail',
      heldOut: 0,
      outDir,
    });
    const path = join(outDir, MODEL_FILE);
    const bytes = new Uint8Array(readFileSync(path));
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
    writeFileSync(path, bytes);
    expect(() => loadPretrained(outDir)).toThrow(/checksum mismatch \(the file is corrupt or truncated\)/);
    expect(() => Gpt.deserialize(bytes)).toThrow(/cannot load embedded model weights/);
  });
});
