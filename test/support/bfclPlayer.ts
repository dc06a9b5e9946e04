/**
 * A scripted model for the fake server: it recognises which BFCL task and turn a request is
 * about from the conversation, and answers by a per-task behaviour (replay the ground truth,
 * answer wrongly, emit malformed calls, fail with HTTP errors, hang), in any tool-call format.
 */
import type { ToolCallFormat } from '../../src/agent/format.js';
import { paramsOfTool } from '../../src/bfcl/trajectory.js';
import type { BfclData, BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { ADDITIONAL_FUNCTION_MESSAGE } from '../../src/envs/bfcl/episode.js';
import { keywordCallString } from '../../src/envs/py/calls.js';
import { hermesText, structuredCall } from './calls.js';
import type { ChatRequestBody, FakeReply, FakeScript } from './fakeModelServer.js';

export type Behaviour =
  | 'gt'
  | 'wrong'
  | 'malformed'
  | { readonly failFirst: number; readonly status: number }
  | 'hang_once';

interface Located {
  readonly task: BfclTask;
  readonly turn: number;
  /** assistant messages since the turn's user message */
  readonly step: number;
}

function text(m: Record<string, unknown>): string {
  return typeof m.content === 'string' ? m.content : '';
}

/** Which task, turn and step a request is at, from its messages. */
export function locate(body: ChatRequestBody, data: BfclData, ids: readonly string[]): Located | undefined {
  const messages = body.messages ?? [];
  const userTexts = messages.filter((m) => m.role === 'user').map(text);
  const task = ids
    .map((id) => data.byId.get(id)!)
    .find((t) => userTexts.includes(t.question[0]![0]!.content));
  if (!task) return undefined;
  let turn = -1;
  let step = 0;
  for (const m of messages) {
    const c = text(m);
    const isTurnStart =
      m.role === 'user' &&
      (task.question.some((q, i) => i > turn && q.length > 0 && q[0]!.content === c) ||
        c.endsWith(ADDITIONAL_FUNCTION_MESSAGE));
    if (isTurnStart) {
      const idx = task.question.findIndex(
        (q, i) => i > turn && (q.length > 0 ? q[0]!.content === c : c.endsWith(ADDITIONAL_FUNCTION_MESSAGE)),
      );
      turn = idx;
      step = 0;
    } else if (m.role === 'assistant') step++;
  }
  return { task, turn, step };
}

function encodeCalls(calls: readonly string[], format: ToolCallFormat, data: BfclData): FakeReply {
  const structured = calls.map((c) => structuredCall(c, data));
  switch (format) {
    case 'native':
      return { content: null, toolCalls: structured };
    case 'hermes':
      return { content: hermesText(structured) };
    case 'python':
      // as BFCL's prompt asks: keyword arguments only (the official decoder drops positional ones)
      return { content: `[${calls.map((c) => keywordForm(c, data)).join(', ')}]` };
    case 'compact':
      return { content: `[${calls.join(', ')}]` };
  }
}

/** A ground-truth call with its positional arguments named: `sort('a')` -> `sort(file_name='a')`. */
export function keywordForm(call: string, data: BfclData): string {
  return keywordCallString(call, paramsOfTool(data));
}

function malformed(format: ToolCallFormat): FakeReply {
  switch (format) {
    case 'native':
      return { toolCalls: [{ name: 'ls', arguments: '{"a": tru' }] };
    case 'hermes':
      return { content: '<tool_call>\n{"name": "ls", "arguments": {"a": }\n</tool_call>' };
    case 'python':
    case 'compact':
      return { content: "[cd(folder='document'" };
  }
}

export function bfclPlayer(
  data: BfclData,
  behaviours: Readonly<Record<string, Behaviour>>,
  format: ToolCallFormat,
): FakeScript {
  const ids = Object.keys(behaviours);
  const seen = new Map<string, number>();
  return (body) => {
    const at = locate(body, data, ids);
    if (!at)
      return {
        status: 400,
        body: { error: { message: 'the scripted model does not know this conversation' } },
      };
    const b = behaviours[at.task.id]!;
    const n = (seen.get(at.task.id) ?? 0) + 1;
    seen.set(at.task.id, n);
    if (typeof b === 'object' && n <= b.failFirst) return { status: b.status };
    if (b === 'hang_once' && n === 1) return { hang: true };
    const gt = at.task.groundTruth[at.turn] ?? [];
    if (b === 'wrong') return { content: 'I am not able to help with that.' };
    if (b === 'malformed' && at.turn === 0 && at.step === 0) return malformed(format);
    if (at.step === 0 && gt.length > 0) return encodeCalls(gt, format, data);
    return { content: 'Done.' };
  };
}
