// @module-tag bfcl-data
/**
 * `seal serve` driven over real HTTP on loopback, as the reference's trainer drives its env
 * service: ground-truth episodes score 1.0 in every category and format, a wrong one scores 0
 * with the right labels, validation instances never see the interface, and every bad request
 * gets its status and a `{detail}` that says what is wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleFunctions } from '../../src/envs/bfcl/episode.js';
import { HINT_PREFIX, PROMPT_HEADER, REQUIRED_MARK } from '../../src/seal/interface.js';
import type { LoopDelayMs } from '../../src/server/loop-delay.js';
import { buildDist } from '../support/cli.js';
import { DATA_DIR, sharedData } from '../support/golden.js';
import {
  get,
  Instance,
  playGroundTruth,
  post,
  type Served,
  type StepData,
  startServe,
  WORKER_COUNTS,
} from './client.js';

const data = sharedData();

beforeAll(async () => {
  await buildDist();
});

for (const workers of WORKER_COUNTS)
  describe(`seal serve --workers ${workers}`, () => {
    let served: Served;
    let url: string;
    let n = 0;
    const fresh = () => new Instance(url, `test-${n++}`);

    beforeAll(async () => {
      // Every interface component forced on, so that its absence in validation mode means something.
      served = await startServe(
        [
          '--suite',
          'bfcl',
          '--data-dir',
          DATA_DIR,
          '--schema-cues',
          'on',
          '--error-feedback',
          'on',
          '--body-limit',
          '65536',
        ],
        workers,
      );
      url = served.url;
    });

    afterAll(async () => {
      expect(await served.stop()).toBe(0);
      expect(served.output()).toContain('seal serve: stopped (SIGTERM)');
    });

    describe('seal serve: episodes', () => {
      it('answers /healthz', async () => {
        const r = await get(url, '/healthz');
        expect(r).toEqual({ status: 200, body: 'OK' });
      });

      it('lists the split through /get_env_profile', async () => {
        const train = await post<{ success: boolean; data: string[] }>(url, '/get_env_profile', {
          env_type: 'bfcl',
          params: { split: 'train' },
        });
        expect(train.body.success).toBe(true);
        expect(train.body.data).toEqual(data.split.train);
        const cat = await post<{ data: string[] }>(url, '/get_env_profile', {
          env_type: 'bfcl',
          params: { split: 'test', category: 'miss_func' },
        });
        expect(cat.body.data.length).toBeGreaterThan(0);
        expect(cat.body.data.every((id) => id.startsWith('multi_turn_miss_func_'))).toBe(true);
      });

      for (const category of ['base', 'miss_func', 'miss_param', 'long_context'] as const) {
        it(`plays a ground-truth ${category} episode to reward 1.0 with every turn passing`, async () => {
          const task = data.tasks.find((t) => t.category === category && t.question.length >= 3)!;
          const inst = fresh();
          const { created, steps } = await playGroundTruth(inst, data, task.id, 'hermes');
          expect(created.state.map((m) => m.role)).toEqual(['system', 'user']);
          expect(created.state[1]!.content).toBe(task.question[0]![0]!.content);
          expect(created.info).toMatchObject({ task_id: task.id, category, mode: 'train', format: 'hermes' });
          const last = steps.at(-1)!;
          expect(steps.slice(0, -1).every((s) => !s.is_terminated && s.reward === 0)).toBe(true);
          expect(last).toMatchObject({ is_terminated: true, reward: 1 });
          expect(last.state).toEqual([{ role: 'user', content: '[CONVERSATION_COMPLETED]' }]);
          if (category === 'miss_func') {
            const reveal = steps.find((s) => s.info.functions_added !== undefined)!;
            expect(reveal.state[0]!.content).toContain('I have updated some more functions');
          }
          expect(await inst.evaluate({ sparse: true })).toBe(1);
          const dense = await inst.evaluate();
          expect(dense).toMatchObject({ accuracy: 1, completed: true, bfcl_progress: 1, force_quit: false });
          const labels = dense.labels as string[];
          expect(labels).toHaveLength(task.question.length);
          expect(labels.every((l) => l === 'pass' || l === 'correct_abstention')).toBe(true);
          expect(dense.weight).toBeGreaterThan(0);
          expect(await inst.release()).toBeNull();
        });
      }

      it('plays ground truth in the python-list and native formats too', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        for (const format of ['python', 'native'] as const) {
          const inst = fresh();
          const { created, steps } = await playGroundTruth(inst, data, task.id, format);
          if (format === 'native') expect((created.info.tools as unknown[]).length).toBeGreaterThan(0);
          expect(steps.at(-1)).toMatchObject({ is_terminated: true, reward: 1 });
        }
      });

      it('scores a wrong episode 0 and labels its turns', async () => {
        const task = data.tasks.find(
          (t) => t.category === 'base' && t.groundTruth.every((g) => g.length > 0),
        )!;
        const inst = fresh();
        await inst.create(task.id);
        let last: StepData | undefined;
        for (let t = 0; t < task.question.length; t++) last = await inst.step({ content: 'I cannot help.' });
        expect(last).toMatchObject({ is_terminated: true, reward: 0 });
        const dense = await inst.evaluate();
        expect(dense).toMatchObject({ accuracy: 0, bfcl_progress: 0 });
        expect(dense.labels).toEqual(task.question.map(() => 'missing_tool_call'));
        expect(dense.weight).toBe(1.5);
        expect(await inst.evaluate({ sparse: true })).toBe(0);
      });

      it('answers a parse error with the error and lets the policy retry; a bad call gets the tool error', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        const inst = fresh();
        await inst.create(task.id);
        const bad = await inst.step({
          content: '<tool_call>\n{"name": "ls", "arguments": {"a": }\n</tool_call>',
        });
        expect(bad.is_terminated).toBe(false);
        expect(bad.info).toMatchObject({ error_type: 'parse_error', turn: 0 });
        expect(bad.state[0]!.content).toMatch(/^\[ERROR\] Invalid tool call format: /);
        const fn = visibleFunctions(task, data, 0).find((f) => (f.parameters.required ?? []).length > 0)!;
        const err = await inst.step({
          content: `<tool_call>\n{"name": "${fn.name}", "arguments": {}}\n</tool_call>`,
        });
        expect(err.info).toMatchObject({ error_type: 'tool_error', turn: 0 });
        expect(err.state[0]!.content).toContain(HINT_PREFIX.trim());
        const dense = await inst.evaluate();
        expect((dense.labels as string[])[0]).toBe('invalid_tool_call');
      });

      it('cuts a policy that makes valid calls forever at the 20-step limit, its retry counted', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        const inst = fresh();
        await inst.create(task.id);
        const bad = await inst.step({ content: '<tool_call>\n{"name": "ls", "arguments": \n</tool_call>' });
        expect(bad.info).toMatchObject({ error_type: 'parse_error', step: 1 });
        const call = { content: '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>' };
        let last: StepData | undefined;
        for (let step = 2; step <= 20; step++) {
          last = await inst.step(call);
          expect(last.is_terminated, `step ${step}`).toBe(false);
        }
        last = await inst.step(call);
        expect(last).toMatchObject({ is_terminated: true, reward: 0, info: { step: 21, force_quit: true } });
        expect(await inst.evaluate()).toMatchObject({ force_quit: true, accuracy: 0 });
      });

      it('shows a validation instance no interface text anywhere', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        const fn = visibleFunctions(task, data, 0).find((f) => (f.parameters.required ?? []).length > 0)!;
        const play = async (params: Record<string, unknown>) => {
          const inst = fresh();
          const seen: string[] = [];
          const created = await inst.create(task.id, params);
          seen.push(...created.state.map((m) => m.content));
          for (const content of [
            '<tool_call>{"name": "ls", "arguments": {"a": }</tool_call>',
            `<tool_call>\n{"name": "${fn.name}", "arguments": {}}\n</tool_call>`,
            `<tool_call>\n{"name": "${fn.name}", "arguments": {"no_such_argument": 1}}\n</tool_call>`,
            '<tool_call>\n{"name": "not_a_tool", "arguments": {}}\n</tool_call>',
            'I am done.',
          ]) {
            const r = await inst.step({ content });
            seen.push(...r.state.map((m) => m.content));
          }
          return { text: seen.join('\n'), info: created.info };
        };
        const markers = [PROMPT_HEADER, REQUIRED_MARK, HINT_PREFIX.trim(), 'could not be read as tool calls'];
        const training = await play({});
        for (const m of markers) expect(training.text).toContain(m);
        for (const params of [{ rollout_mode: 'validate' }, { mode: 'validation' }]) {
          const validation = await play(params);
          expect(validation.info).toMatchObject({ mode: 'validation', interface_round: null });
          for (const m of markers) expect(validation.text).not.toContain(m);
        }
        // The reference's switches: only what is enabled is shown.
        const lite = await play({ observation_lite: { enable: true } });
        expect(lite.text).toContain(REQUIRED_MARK);
        expect(lite.text).not.toContain(HINT_PREFIX.trim());
      });

      it('lists the current tools through /get_info', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        const inst = fresh();
        await inst.create(task.id);
        const r = await post<{ data: string }>(url, '/get_info', { instance_id: inst.id });
        expect(r.body.data).toMatch(/^Available tools:\n- /);
        expect(r.body.data.split('\n')).toHaveLength(visibleFunctions(task, data, 0).length + 1);
      });

      it('re-creating an existing id releases the old instance', async () => {
        const [a, b] = data.tasks.filter((t) => t.category === 'base');
        const inst = fresh();
        await inst.create(a!.id);
        await inst.step({ content: 'nothing' });
        const again = await inst.create(b!.id);
        expect(again.info.task_id).toBe(b!.id);
        const dense = await inst.evaluate();
        expect(dense.task_id).toBe(b!.id);
        const stats = await get<{ replaced: number }>(url, '/stats');
        expect(stats.body.replaced).toBeGreaterThanOrEqual(1);
      });

      it('/stats says how long the event loop was held up, and reset_delay starts a new window', async () => {
        type Delay = { event_loop_delay_ms: LoopDelayMs };
        // the server's process stopped for 300 ms: its loop is held up about that long
        const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
        await get(url, '/stats?reset_delay=1');
        // after a reset the monitor's first tick only takes a timestamp: let it come first
        await pause(50);
        served.proc.kill('SIGSTOP');
        await pause(300);
        served.proc.kill('SIGCONT');
        await pause(60);
        const before = (await get<Delay>(url, '/stats?reset_delay=1')).body.event_loop_delay_ms;
        expect(before.max).toBeGreaterThanOrEqual(150);
        expect(before.p50).toBeLessThanOrEqual(before.p99);
        expect(before.p99).toBeLessThanOrEqual(before.max);
        await pause(100);
        const after = (await get<Delay>(url, '/stats')).body.event_loop_delay_ms;
        expect(after.max).toBeLessThan(before.max);
      });
    });

    describe('seal serve: errors', () => {
      const expectDetail = (r: { status: number; body: unknown }, status: number, pattern: RegExp) => {
        expect(r.status).toBe(status);
        expect(JSON.stringify((r.body as { detail: unknown }).detail)).toMatch(pattern);
        expect(JSON.stringify(r.body)).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace
      };

      it('422 names the field that breaks the schema', async () => {
        const inst = fresh();
        await inst.create(data.tasks[0]!.id);
        expectDetail(
          await post(url, '/step', { instance_id: inst.id, messages: 'hi' }),
          422,
          /"body","messages"/,
        );
        expectDetail(
          await post(url, '/step', { instance_id: inst.id, messages: { content: 5 } }),
          422,
          /"body","messages","content"/,
        );
        expectDetail(
          await post(url, '/create', { task_id: data.tasks[0]!.id, params: { format: 'yaml' } }),
          422,
          /"params","format"/,
        );
        expectDetail(
          await post(url, '/create', {
            task_id: data.tasks[0]!.id,
            params: { tool_call_parser: 'llama31_official_fc' },
          }),
          422,
          /tool_call_parser.*not supported/,
        );
        expectDetail(
          await post(url, '/evaluate', { instance_id: inst.id, params: { sparse: 'yes' } }),
          422,
          /"params","sparse"/,
        );
        expectDetail(await post(url, '/create', [1, 2]), 422, /"body"/);
      });

      it('400 for a missing or unknown instance, task, env type or split, and for bad JSON', async () => {
        expectDetail(
          await post(url, '/step', { messages: { content: 'x' } }),
          400,
          /instance_id is required/,
        );
        for (const route of ['/step', '/evaluate', '/get_info'])
          expectDetail(
            await post(url, route, { instance_id: 'nope', messages: {} }),
            400,
            /Instance nope not found/,
          );
        expectDetail(await post(url, '/create', { env_type: 'bfcl' }), 400, /task_id is required/);
        expectDetail(await post(url, '/create', { task_id: 'multi_turn_nope_9' }), 400, /is not a task/);
        expectDetail(
          await post(url, '/create', { env_type: 'webshop', task_id: 'x' }),
          400,
          /unknown env_type/,
        );
        expectDetail(await post(url, '/get_env_profile', { params: { split: 'dev' } }), 400, /unknown split/);
        expectDetail(await post(url, '/step', '{"instance_id": '), 400, /not valid JSON/);
        expectDetail(await post(url, '/release', {}), 400, /instance_id is required/);
      });

      it('release of an unknown id answers success false, as the reference does', async () => {
        const r = await post(url, '/release', { instance_id: 'never-made' });
        expect(r).toEqual({ status: 200, body: { success: false, data: null } });
      });

      it('409 for a step on a finished episode', async () => {
        const task = data.tasks.find((t) => t.category === 'base')!;
        const inst = fresh();
        await inst.create(task.id);
        for (let t = 0; t < task.question.length; t++) await inst.step({ content: 'no' });
        const r = await post(url, '/step', { instance_id: inst.id, messages: { content: 'again' } });
        expectDetail(r, 409, /has finished its episode/);
        expect(await inst.evaluate({ sparse: true })).toBe(0);
      });

      it('413 for a body over the limit, 404 for an unknown route; the server keeps serving', async () => {
        const inst = fresh();
        await inst.create(data.tasks[0]!.id);
        const big = await post(url, '/step', {
          instance_id: inst.id,
          messages: { content: 'x'.repeat(100_000) },
        });
        expectDetail(big, 413, /too large/i);
        expectDetail(await post(url, '/reset', {}), 404, /no route POST \/reset/);
        expect((await inst.step({ content: 'fine' })).is_terminated).toBe(false);
      });
    });
  });
