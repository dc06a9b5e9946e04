/**
 * Nemotron 3 (nemotron3, nemotron3_disable_thinking; NVIDIA-Nemotron-3 Nano and Super), as the
 * cookbook's nemotron3 renderer writes it: Qwen's `<|im_start|>role\n...<|im_end|>` turns, joined by
 * a newline, with XML tool calls
 *
 *   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>\n
 *
 * where VALUE is written as the Hugging Face template's `|string` does: JSON for objects and lists,
 * Python's str() for the rest (so `True`, `None`, `30.0`, `1e+21`). Tools are declared in the
 * system message, after the system prompt, as `<function><name>...<parameters><parameter>...` XML
 * (each schema key the template does not name is written as its own tag), followed by the
 * template's instructions. A conversation always starts with a system message, empty if none.
 * Tool results go in a user turn, one `<tool_response>` each, consecutive results in one turn.
 *
 * Reasoning: an assistant message before the last user message loses its reasoning and gets an
 * empty `<think></think>`; so does every assistant message without reasoning, in history or not.
 * Later messages keep `<think>\nREASONING\n</think>\n`. The prompt ends with an open `<think>\n`
 * (disable_thinking: a closed `<think></think>`), which the training sequence of a turn without
 * reasoning does not continue (its header has `<think></think>`): so the sequence does not extend
 * across turns, and the disable_thinking variant refuses to train on a turn with reasoning.
 *
 * Parsing follows the cookbook: a prompt's open `<think>\n` is restored when the completion closes
 * it; `<tool_call>` blocks are read as JSON calls or else as the XML form, whose parameter values
 * are JSON when they parse and strings otherwise. Where a value parses, seal keeps the text the
 * model wrote (`30.0` stays `30.0`); the cookbook re-dumps it. As in the cookbook, a boolean written
 * `True` comes back as the string "True": that is how the template writes it.
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
import { dumps, fromJs, jsonString, type PyValue, parseJson, pyStr, tagText } from './python.js';
import { jsonCall } from './qwen3.js';

const END = '<|im_end|>';
const RAW_MAX = 16384;
const UNTERMINATED = 'unterminated tool block';

const TOOLS_INSTRUCTIONS =
  'If you choose to call a function ONLY reply in the following format with NO suffix:\n\n' +
  '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n' +
  '<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n' +
  '</parameter>\n</function>\n</tool_call>\n\n' +
  '<IMPORTANT>\nReminder:\n' +
  '- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n' +
  '- Required parameters MUST be specified\n' +
  '- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n' +
  '- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n' +
  '</IMPORTANT>';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** a schema value as the template writes it between tags: JSON for objects and lists, else str() */
function tagValue(v: unknown): string {
  return tagText(fromJs(v));
}

function extraTags(obj: Record<string, unknown>, handled: readonly string[]): string[] {
  return Object.entries(obj)
    .filter(([k]) => !handled.includes(k))
    .map(([k, v]) => `<${k}>${tagValue(v)}</${k}>`);
}

function declareTool(tool: ToolSpec): string {
  const t = tool as unknown as Record<string, unknown>;
  const lines = ['<function>', `<name>${tool.name}</name>`];
  const description = typeof tool.description === 'string' ? tool.description.trim() : '';
  if (description) lines.push(`<description>${description}</description>`);
  lines.push('<parameters>');
  const params = isObject(tool.parameters) ? tool.parameters : {};
  if (isObject(params.properties))
    for (const [name, fields] of Object.entries(params.properties)) {
      const f = isObject(fields) ? fields : {};
      lines.push('<parameter>', `<name>${name}</name>`);
      if ('type' in f) lines.push(`<type>${pyStr(fromJs(f.type))}</type>`);
      if ('description' in f) lines.push(`<description>${String(f.description).trim()}</description>`);
      if ('enum' in f) lines.push(`<enum>${dumps(fromJs(f.enum))}</enum>`);
      lines.push(...extraTags(f, ['name', 'type', 'description', 'enum']), '</parameter>');
    }
  lines.push(...extraTags(params, ['type', 'properties', 'required']));
  if ('required' in params) lines.push(`<required>${dumps(fromJs(params.required))}</required>`);
  lines.push('</parameters>', ...extraTags(t, ['type', 'name', 'description', 'parameters']), '</function>');
  return lines.join('\n');
}

function callXml(c: FamilyToolCall): string {
  let entries: [unknown, PyValue][] = [];
  if (c.arguments) {
    const parsed = parseJson(c.arguments);
    if (!('value' in parsed) || !(parsed.value instanceof Map))
      throw new RenderRefused(
        `nemotron3 writes a call's arguments one by one: ${c.name}'s are not a JSON object`,
      );
    entries = [...parsed.value];
  }
  const params = entries.map(([k, v]) => `<parameter=${String(k)}>\n${tagText(v)}\n</parameter>`);
  return [`<tool_call>\n<function=${c.name}>`, ...params, '</function>\n</tool_call>'].join('\n');
}

/** the cookbook's messages carry reasoning as a content part; seal's as `thinking` */
const structured = (m: FamilyMessage) => m.thinking !== undefined;
const hasThinking = (m: FamilyMessage) => structured(m) || m.content.includes('<think>');

function assistantHeaderSuffix(m: FamilyMessage, historical: boolean): string {
  if (hasThinking(m) && !historical) return '';
  // the template cuts history at </think> and keeps the newline after it, except where its
  // tool-call branch trims the content
  if (historical && structured(m) && m.content !== '' && !m.toolCalls?.length) return '<think></think>\n';
  return '<think></think>';
}

function messagePieces(all: readonly FamilyMessage[], idx: number, lastUser: number): Piece[] {
  const m = all[idx]!;
  const isTool = m.role === 'tool';
  const inTurn = idx === all.length - 1 || (m.role === 'assistant' && idx >= lastUser);
  let head = '';
  if (!(isTool && all[idx - 1]?.role === 'tool')) {
    head = `${idx > 0 ? '\n' : ''}<|im_start|>${isTool ? 'user' : m.role}\n`;
    if (m.role === 'assistant') head += assistantHeaderSuffix(m, idx < lastUser);
  }
  let out = '';
  if (structured(m) && !(m.role === 'assistant' && !inTurn)) out += `<think>\n${m.thinking}\n</think>\n`;
  // a text-only message is trimmed; text beside reasoning is written as it is
  out += structured(m) ? m.content : m.content.trim();
  if (isTool) out = `<tool_response>\n${out}\n</tool_response>\n`;
  if (m.toolCalls !== undefined) {
    // the reasoning block already ends with a newline
    const prefix = structured(m) && m.content === '' ? '' : '\n';
    out += prefix + m.toolCalls.map((c) => callXml(c) + '\n').join('');
  }
  // consecutive tool results share one user turn
  if (!(isTool && all[idx + 1]?.role === 'tool')) out += END;
  return [{ text: head }, { text: out }].filter((p) => p.text !== '');
}

function render(messages: readonly FamilyMessage[]): Piece[] {
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') lastUser = i;
  });
  return messages.flatMap((_, i) => messagePieces(messages, i, lastUser));
}

/** Nemotron's template always writes a system turn */
function withSystem(messages: readonly FamilyMessage[]): readonly FamilyMessage[] {
  return messages[0]?.role === 'system' ? messages : [{ role: 'system', content: '' }, ...messages];
}

type Part = { type: 'text'; text: string } | { type: 'thinking'; thinking: string };

const FUNCTION_RE = /^\s*<tool_call>\s*<function=([^>\n]+)>\s*([\s\S]*?)\s*<\/function>\s*<\/tool_call>\s*$/;
const PARAM_RE = /<parameter=([^>\n]+)>\s*([\s\S]*?)\s*<\/parameter>/g;

/** the XML form; a value that parses as JSON keeps its text, any other is a string */
function xmlCall(raw: string): FamilyToolCall | UnparsedCall {
  const m = FUNCTION_RE.exec(raw);
  if (!m) return { raw, error: 'Malformed tool call XML' };
  const name = m[1]!.trim();
  if (!name) return { raw, error: 'Missing function name' };
  const body = m[2]!;
  const values = new Map<string, string>();
  let pos = 0;
  for (const p of body.matchAll(PARAM_RE)) {
    if (body.slice(pos, p.index).trim())
      return { raw, error: 'Unexpected non-parameter content inside <function> block' };
    const key = p[1]!.trim();
    if (!key) return { raw, error: 'Empty parameter name' };
    const text = p[2]!.replace(/^\n+|\n+$/g, '');
    values.set(key, 'error' in parseJson(text) ? jsonString(text) : text);
    pos = p.index + p[0].length;
  }
  if (body.slice(pos).trim()) return { raw, error: 'Unexpected trailing content inside <function> block' };
  const args = [...values].map(([k, v]) => `${jsonString(k)}: ${v}`).join(', ');
  return { id: null, name, arguments: `{${args}}` };
}

const isCall = (x: FamilyToolCall | UnparsedCall): x is FamilyToolCall => 'name' in x;

export function parseNemotron(completion: string): ParsedCompletion {
  let text = completion;
  // the prompt's open <think>\n, which the model did not write
  if (!text.startsWith('<think>\n') && text.includes('</think>')) text = '<think>\n' + text;
  const pieces = text.split(END);
  if (pieces.length === 1) return { content: text, reasoning: null, toolCalls: [], unparsed: [], ok: false };
  const content = pieces[0]!;
  const parts: Part[] = [];
  const jsonCalls: FamilyToolCall[] = [];
  const xmlCalls: FamilyToolCall[] = [];
  const unparsed: UnparsedCall[] = [];
  let pos = 0;
  for (const b of content.matchAll(/<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g)) {
    if (b.index > pos) parts.push({ type: 'text', text: content.slice(pos, b.index) });
    pos = b.index + b[0].length;
    if (b[1] !== undefined) {
      if (b[1]) parts.push({ type: 'thinking', thinking: b[1] });
      continue;
    }
    const json = jsonCall(b[2]!, b[0]);
    if (isCall(json)) jsonCalls.push(json);
    else if (!b[0].includes('<function=')) unparsed.push(json);
    else {
      const xml = xmlCall(b[0]);
      if (isCall(xml)) xmlCalls.push(xml);
      else unparsed.push(xml);
    }
  }
  if (pos < content.length) parts.push({ type: 'text', text: content.slice(pos) });
  const opens = content.split('<tool_call>').length - 1;
  if (opens > content.split('</tool_call>').length - 1)
    unparsed.push({
      raw: content.slice(content.lastIndexOf('<tool_call>')).slice(0, RAW_MAX),
      error: `${UNTERMINATED}: '<tool_call>' opened without a matching '</tool_call>'`,
    });
  // the template pads a reasoning block with newlines and puts one after it: framing, not content
  const unframed: Part[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === 'thinking') {
      const t = p.thinking.replace(/^\n+|\n+$/g, '');
      if (t) unframed.push({ type: 'thinking', thinking: t.trim() });
      afterBlock = true;
    } else {
      unframed.push({ type: 'text', text: afterBlock ? p.text.replace(/^\n+/, '') : p.text });
      afterBlock = false;
    }
  }
  const thinking = unframed.flatMap((p) => (p.type === 'thinking' ? [p.thinking] : []));
  return {
    content: unframed.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(''),
    reasoning: thinking.length > 0 ? thinking.join('') : null,
    toolCalls: [...jsonCalls, ...xmlCalls],
    unparsed,
    ok: pieces.length === 2 && unparsed.length === 0,
  };
}

function nemotron3(name: RendererName, disableThinking: boolean): ChatFamily {
  const suffix = disableThinking ? '<think></think>' : '<think>\n';
  const generationPrompt = (messages: readonly FamilyMessage[]): Piece[] => [
    ...render(withSystem(messages)),
    { text: `\n<|im_start|>assistant\n${suffix}` },
  ];
  return {
    name,
    extension: false,
    stop: [END],
    toolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[] {
      if (tools.length === 0) return [{ role: 'system', content: systemPrompt }];
      const toolsText =
        '# Tools\n\nYou have access to the following functions:\n\n' +
        `<tools>\n${tools.map(declareTool).join('\n')}\n</tools>\n\n${TOOLS_INSTRUCTIONS}`;
      return [{ role: 'system', content: systemPrompt ? `${systemPrompt}\n\n${toolsText}` : toolsText }];
    },
    generationPrompt,
    supervised(messages) {
      const all = withSystem(messages);
      const pieces = render(all);
      if (disableThinking && all[all.length - 1]?.role === 'assistant') {
        const prompt = textOf(generationPrompt(all.slice(0, -1)));
        if (!textOf(pieces).startsWith(prompt))
          throw new RenderRefused(
            `${name} has thinking turned off (its prompt closes the think block); this assistant turn has reasoning: use nemotron3 or drop the reasoning`,
          );
      }
      return pieces;
    },
    parse: parseNemotron,
  };
}

registerFamily('nemotron3', (_: FamilyOptions) => nemotron3('nemotron3', false));
registerFamily('nemotron3_disable_thinking', (_: FamilyOptions) =>
  nemotron3('nemotron3_disable_thinking', true),
);
