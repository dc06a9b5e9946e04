/**
 * Qwen3's ChatML format, as the cookbook's qwen3.py renderers write it: `<|im_start|>role\n ...
 * <|im_end|>` turns joined by a newline, tool results as user turns wrapped in `<tool_response>`,
 * tools declared as one JSON line each inside `<tools>` in the system message, and calls written as
 * `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`.
 *
 * - qwen3: the turn being produced opens with `<think>\n...\n</think>\n\n` (an empty block when it
 *   did not reason); reasoning is dropped from every earlier assistant turn, so a later prompt does
 *   not extend the earlier one (no one sequence across turns).
 * - qwen3_disable_thinking: the same, but the generation prompt closes an empty block, so sampling
 *   starts after it; a turn that reasoned cannot be trained after that prompt and is refused.
 * - qwen3_instruct (the 2507 models): no `<think>` framing at all.
 *
 * Where the cookbook differs from Qwen3's Hugging Face template (and seal follows the cookbook, its
 * renderers being what Tinker trains with): the template keeps the reasoning of assistant turns after
 * the last user message (a tool-calling turn and its follow-ups), the cookbook drops it from all
 * history; the template's `tojson` writes non-ASCII characters as they are, the cookbook's
 * `json.dumps` escapes them (`"Zo\u00eb"`) in tool declarations and calls. A message's content is
 * encoded with special tokens read as text, so it cannot forge a turn marker.
 *
 * The contract's message has one reasoning string, not the cookbook's list of parts: a message
 * with `thinking` is rendered as the parts [thinking, text], one without as the cookbook's string
 * content (where a `<think>` block written inline is left to the cookbook's string rules).
 */
import {
  type ChatFamily,
  type FamilyMessage,
  type FamilyToolCall,
  type ParsedCompletion,
  type Piece,
  RenderRefused,
  type ToolSpec,
  textOf,
  type UnparsedCall,
} from './family.js';
import { registerFamily } from './index.js';
import { dumps, fromJs, jsonString, parseJson, stripChars } from './python.js';

export const IM_END = '<|im_end|>';
const TOOL_OPEN = '<tool_call>';
const TOOL_CLOSE = '</tool_call>';
export const UNTERMINATED = 'unterminated tool block';

/** where a message sits, what the cookbook's RenderContext tells a renderer */
export interface QwenContext {
  readonly idx: number;
  readonly isLast: boolean;
  /** index of the last user message, -1 when there is none */
  readonly lastUser: number;
  readonly prev: FamilyMessage | undefined;
  readonly next: FamilyMessage | undefined;
}

export interface RenderedTurn {
  readonly header: Piece;
  readonly output: readonly Piece[];
}

/** the template's roles: a tool result is a user turn */
export const qwenRole = (m: FamilyMessage): string => (m.role === 'tool' ? 'user' : m.role);

/** the cookbook's has_thinking: a reasoning part, or an inline `<think>` in plain content */
export const hasThinking = (m: FamilyMessage): boolean =>
  m.thinking !== undefined || m.content.includes('<think>');

const newlineBefore = (idx: number): string => (idx > 0 ? '\n' : '');

export const header = (role: string, idx: number): string => `${newlineBefore(idx)}<|im_start|>${role}\n`;

/** the arguments JSON of a call as the value the cookbook's `json.loads` gives, or a refusal */
export function callArguments(call: FamilyToolCall, family: string) {
  const r = parseJson(call.arguments);
  if ('error' in r)
    throw new RenderRefused(
      `${family} cannot write the call of ${call.name}: its arguments are not JSON (${r.error})`,
    );
  return r.value;
}

/** what build_generation_prompt and build_supervised_example share, for one Qwen renderer */
export interface QwenRenderer {
  readonly name: string;
  readonly extension: boolean;
  /** the generation prompt closes the think block: a reasoning turn cannot be trained after it */
  readonly disablesThinking: boolean;
  renderMessage(m: FamilyMessage, ctx: QwenContext): RenderedTurn;
  /** the header the generation prompt ends with, for a turn at index idx */
  generationSuffix(idx: number): string;
  toolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[];
  parse(completion: string): ParsedCompletion;
}

function renderAll(r: QwenRenderer, messages: readonly FamilyMessage[]): Piece[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages.flatMap((m, idx) => {
    const { header, output } = r.renderMessage(m, {
      idx,
      isLast: idx === messages.length - 1,
      lastUser,
      prev: messages[idx - 1],
      next: messages[idx + 1],
    });
    return [header, ...output].filter((p) => p.text !== '');
  });
}

/** a ChatFamily made of a Qwen renderer's message rendering */
export function qwenFamily(r: QwenRenderer): ChatFamily {
  const generationPrompt = (messages: readonly FamilyMessage[]): Piece[] => [
    ...renderAll(r, messages),
    { text: r.generationSuffix(messages.length) },
  ];
  return {
    name: r.name,
    extension: r.extension,
    stop: [IM_END],
    toolDeclaration: (tools, systemPrompt) => r.toolDeclaration(tools, systemPrompt),
    generationPrompt,
    supervised(messages) {
      const full = renderAll(r, messages);
      // The cookbook checks that the trained turn follows its own generation prompt; where it does
      // not and the prompt closed the think block, the turn reasoned after being told not to.
      const last = messages.length - 1;
      if (r.disablesThinking && last >= 0 && messages[last]!.role === 'assistant') {
        const prompt = textOf(generationPrompt(messages.slice(0, last)));
        if (!textOf(full).startsWith(prompt))
          throw new RenderRefused(
            `${r.name} has thinking turned off: its generation prompt closes the think block, and this turn contains reasoning; use the thinking renderer or drop the reasoning`,
          );
      }
      return full;
    },
    parse: (completion) => r.parse(completion),
  };
}

// ---------------------------------------------------------------------------------------------
// Parsing, shared with Qwen3.5 (whose renderer inherits Qwen3's parser and adds to it)

interface Part {
  readonly type: 'thinking' | 'text';
  text: string;
}

/** a completion's body cut into text and reasoning parts, and its calls, in the cookbook's way */
export interface QwenParse {
  parts: Part[];
  calls: FamilyToolCall[];
  unparsed: UnparsedCall[];
}

/**
 * a `<tool_call>` body in Qwen3's JSON form `{"name": ..., "arguments": {...}}` (Nemotron 3 reads
 * it too): the model's own arguments text is kept
 */
export function jsonCall(body: string, raw: string): FamilyToolCall | UnparsedCall {
  const text = body.trim();
  const r = parseJson(text);
  if ('error' in r) return { raw, error: `Invalid JSON: ${r.error}` };
  if (!r.members) return { raw, error: 'Tool call is not a JSON object' };
  const member = (key: string) => r.members!.findLast(([k]) => k === key)?.[1];
  const name = member('name')?.value;
  const args = member('arguments');
  const id = member('id')?.value;
  if (typeof name !== 'string') return { raw, error: "Missing or invalid 'name' field" };
  if (!(args?.value instanceof Map)) return { raw, error: "Missing or invalid 'arguments' field" };
  return { id: typeof id === 'string' ? id : null, name, arguments: text.slice(args.start, args.end) };
}

const BLOCK = /<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g;

/**
 * Everything of Qwen3's parse_response after the stop token: `<think>` and `<tool_call>` blocks in
 * one pass (text between them kept exactly), the template's framing taken off the reasoning when
 * the renderer frames it, and a `<tool_call>` left open reported.
 */
export function parseBody(body: string, framesThinking: boolean): QwenParse {
  const out: QwenParse = { parts: [], calls: [], unparsed: [] };
  if (body.includes('<think>') || body.includes(TOOL_OPEN)) {
    let pos = 0;
    for (const m of body.matchAll(BLOCK)) {
      const before = body.slice(pos, m.index);
      if (before !== '') out.parts.push({ type: 'text', text: before });
      if (m[1] !== undefined) {
        if (m[1] !== '') out.parts.push({ type: 'thinking', text: m[1] });
      } else {
        const call = jsonCall(m[2]!, m[0]);
        if ('error' in call) out.unparsed.push(call);
        else out.calls.push(call);
      }
      pos = m.index + m[0].length;
    }
    const rest = body.slice(pos);
    if (rest !== '') out.parts.push({ type: 'text', text: rest });
    if (framesThinking) out.parts = unframe(out.parts);
  } else out.parts.push({ type: 'text', text: body });
  const opens = body.split(TOOL_OPEN).length - 1;
  if (opens > 0 && opens > body.split(TOOL_CLOSE).length - 1)
    out.unparsed.push({
      raw: body.slice(body.lastIndexOf(TOOL_OPEN)),
      error: `${UNTERMINATED}: '${TOOL_OPEN}' opened without a matching '${TOOL_CLOSE}'`,
    });
  return out;
}

/**
 * The framing's padding is not reasoning, and an empty block is a turn that did not reason; the
 * text right after a block loses the newlines the frame put there.
 */
function unframe(parts: readonly Part[]): Part[] {
  const out: Part[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === 'thinking') {
      const reasoning = stripChars(p.text, '\n');
      if (reasoning !== '') out.push({ type: 'thinking', text: reasoning });
      afterBlock = true;
    } else {
      out.push({ type: 'text', text: afterBlock ? stripChars(p.text, '\n', 'left') : p.text });
      afterBlock = false;
    }
  }
  return out;
}

/**
 * The stop token decides: none means the completion was cut off (the cookbook then reads nothing
 * out of it), more than one means the sampler was not stopped at it (the cookbook raises; seal reads
 * the first message and calls it not ok).
 */
export function splitAtStop(completion: string): { body: string; stops: number } {
  const segments = completion.split(IM_END);
  return { body: segments[0]!, stops: segments.length - 1 };
}

export function parsedCompletion(p: QwenParse, ok: boolean): ParsedCompletion {
  const thinking = p.parts.filter((x) => x.type === 'thinking');
  return {
    content: p.parts
      .filter((x) => x.type === 'text')
      .map((x) => x.text)
      .join(''),
    reasoning: thinking.length > 0 ? thinking.map((x) => x.text).join('') : null,
    toolCalls: p.calls,
    unparsed: p.unparsed,
    ok: ok && p.unparsed.length === 0,
  };
}

export function truncated(completion: string): ParsedCompletion {
  return { content: completion, reasoning: null, toolCalls: [], unparsed: [], ok: false };
}

// ---------------------------------------------------------------------------------------------
// Qwen3

const frame = (reasoning: string): string => `<think>\n${stripChars(reasoning, '\n')}\n</think>\n\n`;

/** Python's `str.partition`/`rpartition` pieces the cookbook uses on inline reasoning */
function inlineFramed(content: string): string {
  const at = content.indexOf('</think>');
  const before = content.slice(0, at);
  const rest = content.slice(at + '</think>'.length);
  const open = before.lastIndexOf('<think>');
  const reasoning = open < 0 ? before : before.slice(open + '<think>'.length);
  return frame(reasoning) + stripChars(rest, '\n', 'left');
}

function qwen3Call(call: FamilyToolCall): string {
  const args = dumps(callArguments(call, 'qwen3'));
  return `<tool_call>\n{"name": ${jsonString(call.name)}, "arguments": ${args}}\n</tool_call>`;
}

function qwen3ToolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[] {
  let toolsText = '';
  if (tools.length > 0) {
    const lines = tools.map((t) => dumps(fromJs({ type: 'function', function: t }))).join('\n');
    toolsText = `# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
${lines}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>`;
  }
  return [{ role: 'system', content: systemPrompt ? `${systemPrompt}\n\n${toolsText}` : toolsText }];
}

type Qwen3Variant = 'qwen3' | 'qwen3_disable_thinking' | 'qwen3_instruct';

function qwen3Renderer(name: Qwen3Variant): QwenRenderer {
  // the 2507 instruct models never saw a <think> tag
  const framesThinking = name !== 'qwen3_instruct';
  const disablesThinking = name === 'qwen3_disable_thinking';
  return {
    name,
    // history loses its reasoning; the instruct models have none to lose
    extension: name === 'qwen3_instruct',
    disablesThinking,
    generationSuffix: (idx) => header('assistant', idx) + (disablesThinking ? '<think>\n\n</think>\n\n' : ''),
    toolDeclaration: qwen3ToolDeclaration,
    renderMessage(m, ctx) {
      const assistant = m.role === 'assistant';
      if (
        disablesThinking &&
        assistant &&
        ctx.isLast &&
        ctx.lastUser < 0 &&
        (m.content || m.thinking !== undefined)
      )
        throw new RenderRefused(
          `${name}: this conversation has no user message, so Qwen3's template writes no empty think block on the produced turn, but the generation prompt always opens one; add a user message or render with thinking enabled`,
        );
      // The template frames only a turn after the last user message, and the cookbook (stripping
      // history) only the turn being produced; with no user message the template frames nothing.
      const frames = framesThinking && assistant && ctx.lastUser >= 0 && ctx.isLast;
      let output: string;
      if (m.thinking !== undefined) {
        const keep = !(assistant && !ctx.isLast);
        const reasoning = keep ? (frames ? frame(m.thinking) : `<think>${m.thinking}</think>`) : '';
        output = reasoning + (keep && frames ? stripChars(m.content, '\n', 'left') : m.content);
      } else if (frames && m.content.includes('</think>')) output = inlineFramed(m.content);
      else output = m.content;
      // the template separates calls from the text before them; the cookbook asks before the
      // empty block goes in, but after the turn's own reasoning did
      const hasText = output !== '';
      if (frames && !hasThinking(m)) output = frame('') + stripChars(output, '\n', 'left');
      if (m.role === 'tool') output = `<tool_response>\n${output}\n</tool_response>`;
      if (m.toolCalls !== undefined) output += (hasText ? '\n' : '') + m.toolCalls.map(qwen3Call).join('\n');
      return {
        header: { text: header(qwenRole(m), ctx.idx) },
        output: [{ text: output, specialAsText: true }, { text: IM_END }],
      };
    },
    parse(completion) {
      const { body, stops } = splitAtStop(completion);
      if (stops === 0) return truncated(completion);
      return parsedCompletion(parseBody(body, framesThinking), stops === 1);
    },
  };
}

for (const name of ['qwen3', 'qwen3_disable_thinking', 'qwen3_instruct'] as const)
  registerFamily(name, () => qwenFamily(qwen3Renderer(name)));
