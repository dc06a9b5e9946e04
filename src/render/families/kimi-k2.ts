/**
 * Kimi K2 (kimi_k2, Kimi-K2-Thinking) and Kimi K2.5 (kimi_k25, kimi_k25_disable_thinking), as the
 * cookbook's kimi_k2 and kimi_k25 renderers write them:
 *
 *   <|im_system|>tool_declare<|im_middle|>{tools}<|im_end|>
 *   <|im_system|>system<|im_middle|>{system}<|im_end|>
 *   <|im_user|>user<|im_middle|>{text}<|im_end|>
 *   <|im_assistant|>assistant<|im_middle|><think>{reasoning}</think>{text}
 *     <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|><|im_end|>
 *   <|im_system|>NAME<|im_middle|>## Return of functions.NAME:IDX\n{result}<|im_end|>
 *
 * The tools are declared before the system message: K2 as the OpenAI tool list in compact JSON with
 * sorted keys (Moonshot's own apply_chat_template sorts them), K2.5 as TypeScript function types
 * (kimi-tool-typescript.ts). A conversation without a system message gets Kimi's default one, as
 * the Hugging Face template adds it. Each message is a header piece and a body piece.
 *
 * Reasoning: an assistant message keeps its `<think>` block only in the turn being produced, which
 * for Kimi starts after the last assistant message that called no tool (so the reasoning of the
 * tool-calling steps of the current turn stays); earlier messages get an empty `<think></think>`.
 * So the sequence does not extend across turns. K2's prompt ends at the assistant header; K2.5's
 * adds an open `<think>` (the model continues its reasoning) and the disable_thinking variant a
 * closed `<think></think>`, which is why that variant refuses to train on a turn with reasoning.
 *
 * A call's name is read from its id (`functions.NAME:IDX` -> NAME), as the cookbook does; the id is
 * kept. Unlike the cookbook, seal also reports as unparsed a call whose arguments are JSON but not
 * an object, one with an empty name, and text inside the calls section that is no call (the
 * cookbook keeps the first two and silently drops the third).
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
import { type FamilyOptions, type RendererName, registerFamily } from './index.js';
import { typescriptTools } from './kimi-tool-typescript.js';
import { dumps, fromJs, parseJson } from './python.js';

const END = '<|im_end|>';
const DEFAULT_SYSTEM = 'You are Kimi, an AI assistant created by Moonshot AI.';
const ASSISTANT_HEADER = '<|im_assistant|>assistant<|im_middle|>';
const SECTION_BEGIN = '<|tool_calls_section_begin|>';
const SECTION_END = '<|tool_calls_section_end|>';
const CALL_BEGIN = '<|tool_call_begin|>';
const ARGUMENT_BEGIN = '<|tool_call_argument_begin|>';
const CALL_END = '<|tool_call_end|>';
/** the cookbook caps the raw text it keeps of an unterminated block */
const RAW_MAX = 16384;

// the cookbook accepts the section markers spelt with `tool_call_section` as well as `tool_calls_section`
const SECTION_RE =
  /<\|tool_calls_section_begin\|>([\s\S]*?)<\|tool_calls_section_end\|>|<\|tool_call_section_begin\|>([\s\S]*?)<\|tool_call_section_end\|>/;
const CALL_RE =
  /<\|tool_call_begin\|>\s*([^<]+:\d+)\s*<\|tool_call_argument_begin\|>\s*([\s\S]*?)\s*<\|tool_call_end\|>/g;
const OPEN_CLOSE = [
  [SECTION_BEGIN, SECTION_END],
  ['<|tool_call_section_begin|>', '<|tool_call_section_end|>'],
  [CALL_BEGIN, CALL_END],
] as const;

interface Variant {
  readonly name: RendererName;
  /** what the generation prompt adds after the assistant header */
  readonly prefill: string;
  readonly typescriptTools: boolean;
}

/** Kimi's default system message goes after the tool declaration, or first */
function withSystem(messages: readonly FamilyMessage[]): readonly FamilyMessage[] {
  const system: FamilyMessage = { role: 'system', content: DEFAULT_SYSTEM };
  const first = messages[0];
  if (!first) return [system];
  if (first.role === 'tool_declare')
    return messages[1]?.role === 'system' ? messages : [first, system, ...messages.slice(1)];
  return first.role === 'system' ? messages : [system, ...messages];
}

/** where the turn being produced starts: after the last assistant message that called no tool */
function turnStart(messages: readonly FamilyMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && !m.toolCalls?.length) return i + 1;
  }
  return 0;
}

function header(m: FamilyMessage): string {
  switch (m.role) {
    case 'user':
      return `<|im_user|>user<|im_middle|>`;
    case 'assistant':
      return ASSISTANT_HEADER;
    case 'tool':
      return `<|im_system|>${m.name || 'tool'}<|im_middle|>## Return of ${m.toolCallId ?? ''}\n`;
    default:
      // system, tool_declare and any other role are written as system messages under their own name
      return `<|im_system|>${m.role}<|im_middle|>`;
  }
}

function callText(c: FamilyToolCall, i: number): string {
  return `${CALL_BEGIN}${c.id || `functions.${c.name}:${i}`}${ARGUMENT_BEGIN}${c.arguments}${CALL_END}`;
}

function body(m: FamilyMessage, inTurn: boolean): string {
  if (m.role !== 'assistant') return m.content + END;
  const think = inTurn && m.thinking ? m.thinking : '';
  const calls = m.toolCalls?.length ? SECTION_BEGIN + m.toolCalls.map(callText).join('') + SECTION_END : '';
  return `<think>${think}</think>${m.content}${calls}${END}`;
}

function render(messages: readonly FamilyMessage[], start: number): Piece[] {
  return messages.flatMap((m, i) => [{ text: header(m) }, { text: body(m, i >= start) }]);
}

function functionName(id: string): string {
  const before = id.split(':', 1)[0]!;
  const dot = before.indexOf('.');
  return dot >= 0 ? before.slice(dot + 1) : before;
}

function dangling(content: string): UnparsedCall | undefined {
  for (const [open, close] of OPEN_CLOSE) {
    const opens = content.split(open).length - 1;
    if (opens > 0 && opens > content.split(close).length - 1)
      return {
        raw: content.slice(content.lastIndexOf(open)).slice(0, RAW_MAX),
        error: `unterminated tool block: '${open}' opened without a matching '${close}'`,
      };
  }
  return undefined;
}

function parseSection(section: string): { calls: FamilyToolCall[]; unparsed: UnparsedCall[]; rest: string } {
  const calls: FamilyToolCall[] = [];
  const unparsed: UnparsedCall[] = [];
  let rest = '';
  let pos = 0;
  for (const m of section.matchAll(CALL_RE)) {
    rest += section.slice(pos, m.index);
    pos = m.index + m[0].length;
    const id = m[1]!.trim();
    const args = m[2]!.trim();
    const name = functionName(id);
    const parsed = parseJson(args);
    if ('error' in parsed) unparsed.push({ raw: m[0], error: 'Invalid JSON: the arguments do not parse' });
    else if (!(parsed.value instanceof Map))
      unparsed.push({ raw: m[0], error: 'the arguments are not a JSON object' });
    else if (!name)
      unparsed.push({ raw: m[0], error: `no function name in the call id ${JSON.stringify(id)}` });
    else calls.push({ id, name, arguments: args });
  }
  return { calls, unparsed, rest: rest + section.slice(pos) };
}

/** `<think>` blocks out of the text, as the cookbook's parse_think_blocks: empty blocks dropped */
function thinkBlocks(text: string): { content: string; reasoning: string | null } {
  if (!text.includes('<think>')) return { content: text, reasoning: null };
  const thinking: string[] = [];
  const content = text.replace(/<think>([\s\S]*?)<\/think>/g, (_, t: string) => {
    if (t) thinking.push(t);
    return '';
  });
  return { content, reasoning: thinking.length > 0 ? thinking.join('') : null };
}

export function parseKimi(completion: string, restoreThink: boolean): ParsedCompletion {
  let text = completion;
  // K2.5's prompt ends with an open <think> the model did not write
  if (restoreThink && !text.startsWith('<think>') && text.includes('</think>')) text = '<think>' + text;
  const parts = text.split(END);
  if (parts.length === 1) return { content: text, reasoning: null, toolCalls: [], unparsed: [], ok: false };
  const content = parts[0]!;
  const section = SECTION_RE.exec(content);
  let calls: FamilyToolCall[] = [];
  let unparsed: UnparsedCall[] = [];
  let rest = '';
  if (section) {
    ({ calls, unparsed, rest } = parseSection(section[1] ?? section[2] ?? ''));
  }
  const open = dangling(content);
  if (open) unparsed.push(open);
  else if (rest.trim())
    unparsed.push({ raw: rest.trim(), error: 'text in the tool calls section is not a tool call' });
  const { content: visible, reasoning } = thinkBlocks(section ? content.slice(0, section.index) : content);
  // more than one end marker is a sampler that did not stop: the cookbook raises, seal reports it
  const ok = parts.length === 2 && unparsed.length === 0;
  return { content: visible, reasoning, toolCalls: calls, unparsed, ok };
}

function kimi(variant: Variant): ChatFamily {
  const generationPrompt = (messages: readonly FamilyMessage[]): Piece[] => {
    const all = withSystem(messages);
    const pieces = [...render(all, turnStart(all)), { text: ASSISTANT_HEADER }];
    return variant.prefill ? [...pieces, { text: variant.prefill }] : pieces;
  };
  return {
    name: variant.name,
    extension: false,
    stop: [END],
    toolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[] {
      const system: FamilyMessage = { role: 'system', content: systemPrompt || DEFAULT_SYSTEM };
      if (tools.length === 0) return [system];
      const content = variant.typescriptTools
        ? typescriptTools(tools)
        : dumps(fromJs(tools.map((t) => ({ type: 'function', function: t }))), {
            separators: [',', ':'],
            sortKeys: true,
          });
      return [{ role: 'tool_declare', content }, system];
    },
    generationPrompt,
    supervised(messages) {
      const all = withSystem(messages);
      const pieces = render(all, turnStart(all.slice(0, -1)));
      // a prompt that closes the think block told the model not to reason: a trained turn that
      // does not continue that prompt would teach it otherwise
      if (variant.prefill === '<think></think>' && all[all.length - 1]?.role === 'assistant') {
        const prompt = textOf(generationPrompt(all.slice(0, -1)));
        if (!textOf(pieces).startsWith(prompt))
          throw new RenderRefused(
            `${variant.name} has thinking turned off (its prompt closes the think block); this assistant turn has reasoning: use kimi_k25 or drop the reasoning`,
          );
      }
      return pieces;
    },
    parse: (completion) => parseKimi(completion, variant.prefill !== ''),
  };
}

const variant = (name: RendererName, prefill: string, ts: boolean) => (_: FamilyOptions) =>
  kimi({ name, prefill, typescriptTools: ts });

registerFamily('kimi_k2', variant('kimi_k2', '', false));
registerFamily('kimi_k25', variant('kimi_k25', '<think>', true));
registerFamily('kimi_k25_disable_thinking', variant('kimi_k25_disable_thinking', '<think></think>', true));
