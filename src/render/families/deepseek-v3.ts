/**
 * deepseekv3 and deepseekv3_thinking: DeepSeek V3.1's chat format as the cookbook renders it.
 *
 *   <｜begin▁of▁sentence｜>{system}<｜User｜>{user}<｜Assistant｜></think>{answer}<｜end▁of▁sentence｜>
 *
 * The bars are fullwidth (U+FF5C) and the word gaps U+2581, as in the tokenizer's special tokens.
 * A system message is only allowed first, where it has no role token. Tool calls follow the text
 * of the assistant turn in one block,
 *   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{json}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 * (several calls chained with nothing between them), and each tool result is
 *   <｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>.
 * An assistant turn right after a tool result has no role token (the template continues the same
 * turn), which is why the generation prompt after a tool result ends with the result itself.
 * Tools are declared in the system message: `## Tools`, one `### name` block each with its
 * parameters as Python's `json.dumps` writes them (ASCII-escaped), and the call syntax.
 *
 * deepseekv3 is the non-thinking mode (the cookbook's default for the name): every assistant turn
 * not after a tool result opens with `</think>`, and reasoning is never rendered there.
 * deepseekv3_thinking prefills `<think>` on a generation prompt (but not after a tool result,
 * where the template stays in non-thinking mode), drops the reasoning of history turns without
 * tool calls and writes `</think>` after their role token instead, and writes `<think></think>`
 * before a trained answer that has no reasoning. Dropping history reasoning is why it is not one
 * sequence across turns (extension false), exactly as in the cookbook.
 *
 * Kept from the cookbook although DeepSeek's template differs (the goldens hold seal to it):
 * - an assistant message whose text is empty gets no <｜end▁of▁sentence｜>, even when it has tool
 *   calls (the template always ends a call turn with it). A model trained on the template samples
 *   it there, so after such a turn the next prompt does not extend the sampled sequence.
 * - a completion that did not end with <｜end▁of▁sentence｜> is not searched for tool calls.
 *
 * Parsing (beyond the cookbook, which only reports JSON errors and unterminated blocks):
 * arguments must be a JSON object, and anything inside the calls block that is not a well-formed
 * call (a name the block syntax cannot hold, a missing <｜tool▁sep｜>), a second calls block or
 * text after a second <｜end▁of▁sentence｜> marks the completion not ok instead of being dropped
 * silently; the calls the cookbook would return are returned all the same.
 */

import type { TemplateValue } from '../renderer.js';
import { pyJsonDumps, toRuntime } from '../template.js';
import {
  type ChatFamily,
  type FamilyMessage,
  type FamilyToolCall,
  type ParsedCompletion,
  type Piece,
  RenderRefused,
  type ToolSpec,
  type UnparsedCall,
} from './family.js';
import { type FamilyOptions, registerFamily } from './index.js';

/** a DeepSeek special token: `<｜words▁joined｜>` */
const special = (words: string): string => `<\uff5c${words.replaceAll(' ', '\u2581')}\uff5c>`;

const BOS = special('begin of sentence');
const EOS = special('end of sentence');
const USER = special('User');
const ASSISTANT = special('Assistant');
const CALLS_BEGIN = special('tool calls begin');
const CALLS_END = special('tool calls end');
const CALL_BEGIN = special('tool call begin');
const CALL_END = special('tool call end');
const SEP = special('tool sep');
const OUTPUT_BEGIN = special('tool output begin');
const OUTPUT_END = special('tool output end');
const THINK = '<think>';
const THINK_END = '</think>';

function declaration(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return '';
  const blocks = tools.map(
    (t) =>
      `### ${t.name}\nDescription: ${t.description}\n\nParameters: ${pyJsonDumps(
        toRuntime(t.parameters as TemplateValue),
        { ensureAscii: true },
      )}`,
  );
  return (
    '\n\n## Tools\nYou have access to the following tools:\n\n' +
    blocks.join('\n') +
    '\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n' +
    `${CALLS_BEGIN}${CALL_BEGIN}tool_call_name${SEP}tool_call_arguments${CALL_END}${CALLS_END}\n\n` +
    'Where:\n' +
    '- `tool_call_name` must be an exact match to one of the available tools\n' +
    "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
    '- For multiple tool calls, chain them directly without separators or spaces'
  );
}

function callsBlock(calls: readonly FamilyToolCall[] | undefined): string {
  if (!calls?.length) return '';
  const each = calls.map((c) => `${CALL_BEGIN}${c.name}${SEP}${c.arguments}${CALL_END}`);
  return CALLS_BEGIN + each.join('') + CALLS_END;
}

interface Position {
  readonly index: number;
  readonly isLast: boolean;
  readonly previous: FamilyMessage | undefined;
}

function messagePieces(m: FamilyMessage, at: Position, thinking: boolean): Piece[] {
  const followsTool = at.previous?.role === 'tool';
  switch (m.role) {
    case 'system':
      if (at.index !== 0)
        throw new RenderRefused('DeepSeek V3 takes a system message only at the start of the conversation');
      return m.content ? [{ text: m.content }] : [];
    case 'user':
      return [{ text: USER }, { text: m.content }];
    case 'tool':
      return [{ text: OUTPUT_BEGIN }, { text: m.content + OUTPUT_END }];
    case 'assistant':
      return assistantPieces(m, at, followsTool, thinking);
    default:
      throw new RenderRefused(`DeepSeek V3 has no ${JSON.stringify(m.role)} role`);
  }
}

function assistantPieces(m: FamilyMessage, at: Position, followsTool: boolean, thinking: boolean): Piece[] {
  const hasCalls = (m.toolCalls?.length ?? 0) > 0;
  let body: string;
  // the cookbook ends the turn only when the message has content: a text, or reasoning parts
  let hasContent: boolean;
  if (!thinking && !followsTool) {
    // non-thinking mode: reasoning has no place, not even written inline in the text
    body = m.thinking === undefined ? m.content.replace(/<think>[\s\S]*?<\/think>/g, '') : m.content;
    hasContent = body !== '';
  } else {
    // history turns lose their reasoning unless it led to tool calls (whose results follow)
    const strip = !hasCalls && !at.isLast;
    body = (m.thinking !== undefined && !strip ? THINK + m.thinking + THINK_END : '') + m.content;
    hasContent = m.content !== '' || m.thinking !== undefined;
  }
  body += callsBlock(m.toolCalls);

  const pieces: Piece[] = [];
  if (!followsTool) {
    pieces.push({ text: ASSISTANT });
    if (!thinking || !at.isLast) pieces.push({ text: THINK_END });
    // a trained answer that did not reason (no reasoning part, no <think> written in its text)
    else if (hasContent && m.thinking === undefined && !m.content.includes(THINK))
      pieces.push({ text: THINK + THINK_END });
  }
  if (body) pieces.push({ text: body });
  if (hasContent) pieces.push({ text: EOS });
  return pieces;
}

function conversationPieces(messages: readonly FamilyMessage[], thinking: boolean): Piece[] {
  return [
    { text: BOS },
    ...messages.flatMap((m, index) =>
      messagePieces(
        m,
        { index, isLast: index === messages.length - 1, previous: messages[index - 1] },
        thinking,
      ),
    ),
  ];
}

const count = (text: string, marker: string): number => text.split(marker).length - 1;

const isObjectJson = (text: string): boolean => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return 'arguments are not a JSON object';
  } catch (e) {
    return `invalid JSON arguments: ${e instanceof Error ? e.message : String(e)}`;
  }
}

// Python's \w on str: letters, digits (any script) and the underscore
const CALL = new RegExp(`${CALL_BEGIN}([\\p{L}\\p{N}_]+)${SEP}([\\s\\S]*?)${CALL_END}`, 'gu');
const BLOCK = new RegExp(`${CALLS_BEGIN}([\\s\\S]*?)${CALLS_END}`);
const BLOCKS_WITH_SPACE = new RegExp(`\\s*${CALLS_BEGIN}[\\s\\S]*?${CALLS_END}`, 'g');

/** a block opened more often than closed: the text from the last opening, as the cookbook reports it */
function unterminated(text: string): UnparsedCall | undefined {
  for (const [open, close] of [
    [CALLS_BEGIN, CALLS_END],
    [CALL_BEGIN, CALL_END],
  ] as const) {
    const opens = count(text, open);
    if (opens > 0 && opens > count(text, close))
      return { raw: text.slice(text.lastIndexOf(open)), error: `${open} opened without a matching ${close}` };
  }
  return undefined;
}

function parseCalls(text: string): { calls: FamilyToolCall[]; unparsed: UnparsedCall[] } {
  const calls: FamilyToolCall[] = [];
  const unparsed: UnparsedCall[] = [];
  const block = BLOCK.exec(text);
  if (block) {
    for (const match of block[1]!.matchAll(CALL)) {
      const args = match[2]!.trim();
      if (isObjectJson(args)) calls.push({ name: match[1]!, arguments: args });
      else unparsed.push({ raw: match[0], error: jsonError(args) });
    }
  }
  const dangling = unterminated(text);
  if (dangling) unparsed.push(dangling);
  else if (block) {
    const rest = block[1]!.replace(CALL, '').trim();
    if (rest) unparsed.push({ raw: rest, error: `not a ${CALL_BEGIN}name${SEP}arguments${CALL_END} call` });
    const later = text.slice(block.index + block[0].length);
    if (later.includes(CALLS_BEGIN))
      unparsed.push({ raw: later.slice(later.indexOf(CALLS_BEGIN)), error: 'a second tool-calls block' });
  }
  return { calls, unparsed };
}

/** the text outside <think>...</think> blocks, and the non-empty blocks' text */
function splitThinking(text: string): { content: string; reasoning: string | null } {
  if (!text.includes(THINK)) return { content: text, reasoning: null };
  const thoughts: string[] = [];
  const content = text.replace(/<think>([\s\S]*?)<\/think>/g, (_, thought: string) => {
    if (thought) thoughts.push(thought);
    return '';
  });
  return { content, reasoning: thoughts.length > 0 ? thoughts.join('') : null };
}

function parse(completion: string, thinking: boolean): ParsedCompletion {
  let text = completion;
  // the prompt's prefilled <think> is not part of what was sampled
  if (thinking && !text.startsWith(THINK) && text.includes(THINK_END)) text = THINK + text;
  const ends = count(text, EOS);
  if (ends === 0) return { content: text, reasoning: null, toolCalls: [], unparsed: [], ok: false };
  let body = text.slice(0, text.indexOf(EOS));
  const { calls, unparsed } = parseCalls(body);
  if (calls.length > 0 || unparsed.length > 0) body = body.replace(BLOCKS_WITH_SPACE, '').trim();
  const { content, reasoning } = splitThinking(body);
  return { content, reasoning, toolCalls: calls, unparsed, ok: ends === 1 && unparsed.length === 0 };
}

function deepseekV3(name: 'deepseekv3' | 'deepseekv3_thinking', thinking: boolean) {
  return (_options: FamilyOptions): ChatFamily => ({
    name,
    extension: !thinking,
    stop: [EOS],
    toolDeclaration(tools, systemPrompt) {
      return [{ role: 'system', content: systemPrompt + declaration(tools) }];
    },
    generationPrompt(messages) {
      const pieces = conversationPieces(messages, thinking);
      // after a tool result the answer continues the turn: no role token, no thinking
      if (messages[messages.length - 1]?.role === 'tool') return pieces;
      pieces.push({ text: ASSISTANT }, { text: thinking ? THINK : THINK_END });
      return pieces;
    },
    supervised(messages) {
      return conversationPieces(messages, thinking);
    },
    parse(completion) {
      return parse(completion, thinking);
    },
  });
}

registerFamily('deepseekv3', deepseekV3('deepseekv3', false));
registerFamily('deepseekv3_thinking', deepseekV3('deepseekv3_thinking', true));
