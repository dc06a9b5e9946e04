/**
 * A model for the Tinker test server that can succeed at tasks: it reads the prompt the way the
 * model would (the Qwen3 tokenizer decodes the ids to the chat-template text), finds the task and
 * the user turn it is in from the turns' questions, and writes that turn's ground-truth calls as
 * Qwen `<tool_call>` JSON blocks, tokenized with the same Qwen3 files, ending in `<|im_end|>`. After
 * a tool response it answers in text, ending the turn. Some samples answer in text instead of
 * calling (a failed turn), fewer as the weights take optimiser steps, so that groups have a
 * learning signal and training visibly changes the sampler. Every text answer ends with the tag of
 * the weights that wrote it (`weightsTag`: `base`, or the step and a hash of the learning rates), so
 * a transcript shows which weights sampled it; the calls, which the checker scores, carry none.
 * Logprobs follow the toy model's rule (a function of the token before, the token and the step),
 * for sampling and training alike.
 */
import { inspectCall } from '../../src/envs/bfcl/calls/inspect.js';
import type { BfclData, BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { type FamilyMessage, textOf } from '../../src/render/families/family.js';
import type { FamilyRenderer } from '../../src/render/family-renderer.js';
import type { HfRenderer } from '../../src/render/hf-renderer.js';
import {
  type TestCompletion,
  type TestSampleParams,
  type TinkerTestModel,
  type WeightsState,
  weightsTag,
} from './tinker-server.js';

/** the oracle's logprob of token `tok` after `prev` at weights `step` (the toy model's rule) */
export const oracleLogprob = (prev: number, tok: number, step: number) =>
  -(0.05 + ((prev * 31 + tok * 17) % 97) / 40) * (1 + 0.01 * step);
const lp = oracleLogprob;

/** the chat's blocks: role and content of each `<|im_start|>role\ncontent<|im_end|>` */
function blocksOf(text: string): { role: string; content: string }[] {
  return text
    .split('<|im_start|>')
    .slice(1)
    .map((b) => {
      const nl = b.indexOf('\n');
      const role = nl < 0 ? b : b.slice(0, nl);
      const content = (nl < 0 ? '' : b.slice(nl + 1)).replace(/<\|im_end\|>\s*$/, '');
      return { role, content: content.trim() };
    });
}

const isToolResponse = (s: string) => s.startsWith('<tool_response>');

/** JSON as Python's json.dumps writes it (", " and ": "), as Qwen's template prints tool calls */
function dumps(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(dumps).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${dumps(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

/** the tool-call text of one ground-truth call string (keyword arguments), as the template renders it */
function callBlock(call: string): string {
  const c = inspectCall(call, () => undefined);
  if (!c.name || !c.args) throw new Error(`ground truth call ${call} cannot be read: ${c.problem}`);
  return `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${dumps(c.args)}}\n</tool_call>`;
}

export interface OracleStats {
  samples: number;
  calls: number;
  failures: number;
}

export function oracleModel(
  data: BfclData,
  renderer: HfRenderer,
): TinkerTestModel & { readonly stats: OracleStats } {
  const end = renderer.tokenId('<|im_end|>');
  if (end === undefined) throw new Error('the tokenizer has no <|im_end|>');
  const stats: OracleStats = { samples: 0, calls: 0, failures: 0 };

  /** the task whose turn questions match the turn-starting user messages seen so far */
  const taskOf = (starts: readonly string[]): BfclTask | undefined =>
    data.tasks.find(
      (t) =>
        starts.length <= t.question.length &&
        starts.every((s, k) => {
          const q = t.question[k]!;
          return q.length === 0 || q[0]!.content.trim() === s;
        }),
    );

  function answer(
    prompt: readonly number[],
    params: TestSampleParams,
    w: WeightsState,
    index: number,
  ): string {
    const blocks = blocksOf(renderer.decode(prompt));
    const users = blocks.filter((b) => b.role === 'user');
    const last = users[users.length - 1];
    const signed = (text: string) => `${text} [weights ${weightsTag(w)}]`;
    if (!last || isToolResponse(last.content)) return signed('Done.');
    const starts = users.filter((u) => !isToolResponse(u.content)).map((u) => u.content);
    const task = taskOf(starts);
    const calls = task?.groundTruth[starts.length - 1] ?? [];
    if (calls.length === 0) return signed('I cannot do that with the tools I have.');
    // fewer failures as the weights move: 40% at the base, 20% after one step, ...
    const h = (prompt.length * 2654435761 + (params.seed ?? 0) * 40503 + index * 97) >>> 0;
    if (h % 100 < 40 / (1 + w.step)) {
      stats.failures++;
      return signed('I am not sure what to do.');
    }
    stats.calls += calls.length;
    return calls.map(callBlock).join('\n');
  }

  return {
    stats,
    logprobs(input, targets, w) {
      return targets.map((t, i) => lp(input[i] ?? 0, t, w.step));
    },
    sample(prompt, params, w, index): TestCompletion {
      stats.samples++;
      const ids = [...renderer.encode(answer(prompt, params, w, index)), end];
      const tokens = ids.slice(0, params.maxTokens);
      let prev = prompt[prompt.length - 1] ?? 0;
      const logprobs = tokens.map((t) => {
        const v = lp(prev, t, w.step);
        prev = t;
        return v;
      });
      return { tokens, logprobs, stopReason: tokens.length === ids.length ? 'stop' : 'length' };
    },
  };
}

/**
 * The oracle for any model family: one renderer a base model (the server's weights say which),
 * the prompt read as that family's text, the calls written in the family's own form. The task and
 * its turn are found by the turn questions' text in the prompt (every family writes a user message
 * as given); a turn whose first call's name already follows its question was answered, so the
 * oracle ends it in text. The completion is what the family's renderer writes for an assistant
 * message with those calls (or that text), its end marker included.
 */
export function familyOracleModel(
  data: BfclData,
  renderers: ReadonlyMap<string, FamilyRenderer>,
): TinkerTestModel & {
  readonly stats: OracleStats;
  readonly written: readonly { baseModel: string; text: string }[];
} {
  const stats: OracleStats = { samples: 0, calls: 0, failures: 0 };
  const written: { baseModel: string; text: string }[] = [];
  const questionOf = (t: BfclTask, k: number) => t.question[k]?.[0]?.content.trim() ?? '';

  /** the task and how many of its turns the prompt holds: the most turns found in order */
  function locate(text: string): { task: BfclTask; turns: number; after: string } | undefined {
    let best: { task: BfclTask; turns: number; after: string } | undefined;
    for (const task of data.tasks) {
      let at = 0;
      let turns = 0;
      for (let k = 0; k < task.question.length; k++) {
        const q = questionOf(task, k);
        const i = q === '' ? -1 : text.indexOf(q, at);
        if (i < 0) break;
        at = i + q.length;
        turns = k + 1;
      }
      if (turns > 0 && (!best || turns > best.turns)) best = { task, turns, after: text.slice(at) };
    }
    return best;
  }

  /** an assistant message's completion in the family's form: supervised minus the prompt */
  function completion(r: FamilyRenderer, message: FamilyMessage): string {
    const user: FamilyMessage = { role: 'user', content: 'q' };
    const prompt = textOf(r.family.generationPrompt([user]));
    const full = textOf(r.family.supervised([user, message]));
    if (!full.startsWith(prompt))
      throw new Error(`${r.family.name}: the prompt is not a prefix of the sequence`);
    return full.slice(prompt.length);
  }

  function answer(
    r: FamilyRenderer,
    prompt: readonly number[],
    params: TestSampleParams,
    w: WeightsState,
    index: number,
  ) {
    const text = (s: string) =>
      completion(r, { role: 'assistant', content: `${s} [weights ${weightsTag(w)}]` });
    const found = locate(r.decode(prompt));
    if (!found) return text('I cannot tell what you ask.');
    const calls = found.task.groundTruth[found.turns - 1] ?? [];
    if (calls.length === 0) return text('I cannot do that with the tools I have.');
    const read = calls.map((call) => {
      const c = inspectCall(call, () => undefined);
      if (!c.name || !c.args) throw new Error(`ground truth call ${call} cannot be read: ${c.problem}`);
      return { name: c.name, args: c.args };
    });
    // the calls of this turn already made: their names in order after the question (a family
    // that stops after each call, as harmony does, makes them one completion at a time)
    let made = 0;
    let from = 0;
    for (const c of read) {
      const i = found.after.indexOf(c.name, from);
      if (i < 0) break;
      made++;
      from = i + c.name.length;
    }
    if (made === read.length) return text('Done.');
    const h = (prompt.length * 2654435761 + (params.seed ?? 0) * 40503 + index * 97) >>> 0;
    if (made === 0 && h % 100 < 40 / (1 + w.step)) {
      stats.failures++;
      return text('I am not sure what to do.');
    }
    stats.calls += read.length - made;
    return completion(r, {
      role: 'assistant',
      content: '',
      toolCalls: read.slice(made).map((c, i) => ({
        id: `functions.${c.name}:${i}`,
        name: c.name,
        arguments: dumps(c.args),
      })),
    });
  }

  const rendererOf = (w: WeightsState): FamilyRenderer => {
    const r = renderers.get(w.baseModel);
    if (!r) throw new Error(`the family oracle has no renderer for ${w.baseModel}`);
    return r;
  };

  return {
    stats,
    written,
    logprobs(input, targets, w) {
      return targets.map((t, i) => lp(input[i] ?? 0, t, w.step));
    },
    sample(prompt, params, w, index): TestCompletion {
      stats.samples++;
      const r = rendererOf(w);
      const all = r.encode(answer(r, prompt, params, w, index));
      // a sampler stops at the first stop token, as the service does
      const stop = all.findIndex((t) => r.stopTokens.includes(t));
      const ids = stop < 0 ? all : all.slice(0, stop + 1);
      const tokens = ids.slice(0, params.maxTokens);
      written.push({ baseModel: w.baseModel, text: r.decode(tokens) });
      let prev = prompt[prompt.length - 1] ?? 0;
      const logprobs = tokens.map((t) => {
        const v = lp(prev, t, w.step);
        prev = t;
        return v;
      });
      return { tokens, logprobs, stopReason: tokens.length === ids.length ? 'stop' : 'length' };
    },
  };
}
