/**
 * gpt-oss: OpenAI's harmony format, as the cookbook's GptOssRenderer writes and reads it
 * (renderer names gpt_oss_no_sysprompt, gpt_oss_{low,medium,high}_reasoning).
 *
 * A message is `<|start|>ROLE<|message|>TEXT<|end|>`, with no newline between messages. An
 * assistant message is one or more harmony messages on channels: `analysis` (the reasoning),
 * `commentary` (a preamble before calls, and the calls themselves:
 * `<|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>ARGS<|call|>`)
 * and `final` (the answer, ending `<|return|>` when it is the last message of the sequence and
 * `<|end|>` in history). A tool result is `<|start|>functions.NAME to=assistant<|channel|>commentary
 * <|message|>TEXT<|end|>`. The three `*_reasoning` names put OpenAI's system message (model
 * identity, knowledge cutoff, the date, `Reasoning: low|medium|high`, the valid channels) first;
 * `gpt_oss_no_sysprompt` writes none. A completion ends at `<|return|>` or `<|call|>`, so one
 * completion holds at most one call: parallel calls are sampled one completion at a time.
 *
 * Tools: a second system message routes calls to the `functions` namespace, and a developer
 * message holds `# Instructions` (the system prompt) and `# Tools` with each tool written as a
 * TypeScript-like type (`type NAME = (_:\n{\n// description\nfield?: type, // default: …\n}) => any;`).
 *
 * Where the cookbook differs from the model's Hugging Face chat template and openai/harmony's own
 * renderer: the routing sentence is a separate system message, not a line of the first one; the
 * `*_reasoning` system message always has `Current date:`, and gpt_oss_no_sysprompt has no system
 * message at all; reasoning is kept in history for every earlier turn, where both drop the analysis
 * of finished turns by default. Unlike harmony's renderer (its test data): a tool's parameters open
 * with `(_:` and `{` on the next line, not `(_: {`; defaults are JSON (`"celsius"`, not `celsius`);
 * oneOf/anyOf stay on one line. Unlike the Hugging Face template: calls are written
 * `commentary <|constrain|>json` where it writes `commentary json`, and a tool result is its text as
 * given where it writes the content as JSON. seal follows the cookbook: it is what Tinker trains on.
 *
 * Parsing reads the completion as the cookbook does: harmony messages found by `<|message|>`,
 * header channel and `to=` recipient by pattern, body up to the next end marker. The cookbook
 * raises on a completion with more than one `<|call|>` or `<|return|>`; seal reads every message
 * of it and records the whole text as unparsed (ok=false). Where the cookbook accepts arguments
 * that are JSON but not an object, or a call with an empty name, seal records them as unparsed.
 * A completion with an unparsed call is not ok (the cookbook still calls it a clean stop, and says
 * so through its unparsed_tool_calls). A message to a recipient outside `functions` (`to=get_weather`,
 * harmony's `to=browser.search`) is unparsed too, where the cookbook keeps its body as text: seal
 * declares every tool under `functions`. Text after the first stop token is not read, and a
 * completion with no stop token is read as the cookbook does: nothing but its text.
 */
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
import { type FamilyOptions, type RendererName, registerFamily } from './index.js';
import { dumps, fromJs, pyStrip, tagText } from './python.js';

const START = '<|start|>';
const MESSAGE = '<|message|>';
const END = '<|end|>';
const CALL = '<|call|>';
const RETURN = '<|return|>';

/** the role the cookbook gives its own system messages, so that they are not read as the user's */
export const INTERNAL_SYSTEM_ROLE = '_gptoss_internal_system';

const ROUTING = "Calls to these tools must go to the commentary channel: 'functions'.";

function systemPrompt(date: string, effort: string): string {
  return [
    'You are ChatGPT, a large language model trained by OpenAI.',
    'Knowledge cutoff: 2024-06',
    `Current date: ${date}`,
    '',
    `Reasoning: ${effort}`,
    '',
    '# Valid channels: analysis, commentary, final. Channel must be included for every message.',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Python's json.dumps and str(), as far as the tool declaration shows them: the cookbook writes
// enum values, defaults and examples with json.dumps (ASCII only, `, ` and `: ` separators).

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Python's json.dumps of a schema value */
const pyJsonDumps = (v: unknown): string => dumps(fromJs(v));

/** str() of a value the cookbook puts in a comment */
const pyStr = (v: unknown): string => tagText(fromJs(v));

/** Python truthiness: the cookbook writes a title, description or examples only when truthy */
function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return true;
}

// ---------------------------------------------------------------------------------------------
// The tool declaration's TypeScript-like types

function schemaOf(v: unknown): Record<string, unknown> {
  return isObject(v) ? v : {};
}

function propertiesOf(schema: Record<string, unknown>): [string, Record<string, unknown>][] {
  return Object.entries(schemaOf(schema.properties)).map(([k, v]) => [k, schemaOf(v)]);
}

function requiredOf(schema: Record<string, unknown>): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
}

/** a property's type, inline */
export function typescriptType(schema: Record<string, unknown>): string {
  // unions first, and as they are: a union member's nullability is its own
  if ('oneOf' in schema)
    return (Array.isArray(schema.oneOf) ? schema.oneOf : [])
      .map((s) => typescriptType(schemaOf(s)))
      .join(' | ');
  if ('anyOf' in schema)
    return (Array.isArray(schema.anyOf) ? schema.anyOf : [])
      .map((s) => typescriptType(schemaOf(s)))
      .join(' | ');
  const type = 'type' in schema ? schema.type : 'any';
  // a list of types keeps only the names: ["string", "null"] is `string | any`, as the cookbook writes it
  if (Array.isArray(type)) return type.map((t) => typescriptType({ type: t })).join(' | ');
  let base: string;
  if (type === 'string') {
    if ('enum' in schema) return (Array.isArray(schema.enum) ? schema.enum : []).map(pyJsonDumps).join(' | ');
    base = 'string';
  } else if (type === 'number' || type === 'integer') base = 'number';
  else if (type === 'boolean') base = 'boolean';
  else if (type === 'array') base = `${typescriptType(schemaOf(schema.items))}[]`;
  else if (type === 'object') base = objectType(schema);
  else base = 'any';
  return truthy(schema.nullable) ? `${base} | null` : base;
}

/** a nested object on one line, without comments or defaults */
function objectType(schema: Record<string, unknown>): string {
  const required = requiredOf(schema);
  const fields = propertiesOf(schema).map(
    ([name, prop]) => `${name}${required.has(name) ? '' : '?'}: ${typescriptType(prop)}`,
  );
  return `{ ${fields.join(', ')} }`;
}

function commentsOf(schema: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (truthy(schema.title)) lines.push(pyStr(schema.title), '');
  if (truthy(schema.description)) lines.push(pyStr(schema.description));
  if (truthy(schema.examples)) {
    lines.push('Examples:');
    // Python iterates whatever it is given: a list's items, a dict's keys, a string's characters
    const ex = schema.examples;
    const examples = Array.isArray(ex) ? ex : typeof ex === 'string' ? [...ex] : Object.keys(schemaOf(ex));
    for (const e of examples) lines.push(`- ${pyJsonDumps(e)}`);
  }
  return lines;
}

function parametersBlock(schema: Record<string, unknown>): string {
  if (schema.type !== 'object' || !truthy(schema.properties)) return '()';
  const lines = [truthy(schema.description) ? `(_: // ${pyStr(schema.description)}` : '(_:', '{'];
  const required = requiredOf(schema);
  for (const [name, prop] of propertiesOf(schema)) {
    for (const c of commentsOf(prop)) lines.push(`// ${c}`);
    const fallback = 'default' in prop ? ` // default: ${pyJsonDumps(prop.default)}` : '';
    lines.push(`${name}${required.has(name) ? '' : '?'}: ${typescriptType(prop)},${fallback}`);
  }
  lines.push('})');
  return lines.join('\n');
}

/** one tool as the developer message declares it */
export function toolDefinition(tool: ToolSpec): string {
  const lines: string[] = [];
  if (truthy(tool.description)) lines.push(`// ${pyStr(tool.description)}`);
  lines.push(`type ${tool.name} = ${parametersBlock(schemaOf(tool.parameters))} => any;`);
  return lines.join('\n');
}

function toolDeclaration(tools: readonly ToolSpec[], system: string): FamilyMessage[] {
  const out: FamilyMessage[] = [];
  if (tools.length > 0) out.push({ role: INTERNAL_SYSTEM_ROLE, content: ROUTING });
  const parts: string[] = [];
  if (system) parts.push(`# Instructions\n\n${system}`);
  if (tools.length > 0)
    parts.push(
      `# Tools\n\n## functions\n\nnamespace functions {\n\n${tools.map(toolDefinition).join('\n\n')}\n\n} // namespace functions`,
    );
  if (parts.length > 0) out.push({ role: 'developer', content: parts.join('\n\n') });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rendering

function callsText(calls: readonly FamilyToolCall[]): string {
  return calls
    .map(
      (c) => ` to=functions.${c.name}<|channel|>commentary <|constrain|>json${MESSAGE}${c.arguments}${CALL}`,
    )
    .join(`${START}assistant`);
}

function assistantBody(m: FamilyMessage, last: boolean): string {
  let out = m.thinking ? `<|channel|>analysis${MESSAGE}${m.thinking}${END}${START}assistant` : '';
  const calls = m.toolCalls ?? [];
  if (calls.length > 0) {
    if (m.content) out += `<|channel|>commentary${MESSAGE}${m.content}${END}${START}assistant`;
    // each call ends with <|call|>: no end marker after the last one
    return out + callsText(calls);
  }
  return `${out}<|channel|>final${MESSAGE}${m.content}${last ? RETURN : END}`;
}

/** a message's header and body, encoded apart as the cookbook does */
function messagePieces(m: FamilyMessage, last: boolean): Piece[] {
  // only an assistant message has a reasoning part; the cookbook raises on another's (ensure_text)
  if (m.role !== 'assistant' && m.thinking !== undefined)
    throw new RenderRefused(
      `gpt-oss renders a ${m.role} message as text only; this one has a reasoning part`,
    );
  if (m.role === 'tool') {
    // the cookbook warns and writes functions.unknown when the name is missing
    const name = m.name || 'unknown';
    const recipient = name.startsWith('functions.') ? name : `functions.${name}`;
    return [
      { text: `${START}${recipient} to=assistant` },
      { text: `<|channel|>commentary${MESSAGE}${m.content}${END}` },
    ];
  }
  if (m.role === 'assistant') return [{ text: `${START}assistant` }, { text: assistantBody(m, last) }];
  if (m.role === 'system')
    // the user's system prompt is the developer's instructions in harmony
    return [{ text: `${START}developer` }, { text: `${MESSAGE}# Instructions\n\n${m.content}\n\n${END}` }];
  const role = m.role === INTERNAL_SYSTEM_ROLE ? 'system' : m.role;
  return [{ text: `${START}${role}` }, { text: `${MESSAGE}${m.content}${END}` }];
}

function conversationPieces(messages: readonly FamilyMessage[]): Piece[] {
  return messages.flatMap((m, i) => messagePieces(m, i === messages.length - 1));
}

// ---------------------------------------------------------------------------------------------
// Parsing

interface HarmonyMessage {
  readonly channel: string | null;
  readonly recipient: string | null;
  readonly body: string;
  readonly raw: string;
}

const count = (text: string, s: string): number => text.split(s).length - 1;

/** harmony messages by their `<|message|>` marker: the header before it, the body up to an end marker */
export function harmonyMessages(text: string): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  let idx = 0;
  for (;;) {
    const at = text.indexOf(MESSAGE, idx);
    if (at === -1) break;
    // the header starts at the last <|start|> since the previous message, or right after it
    let start = text.lastIndexOf(START, at - START.length);
    if (start < idx || start + START.length > at) start = idx;
    const header = text.slice(start, at);
    const bodyStart = at + MESSAGE.length;
    let end = text.length;
    let marker = '';
    for (const m of [END, CALL, RETURN]) {
      const i = text.indexOf(m, bodyStart);
      if (i !== -1 && i < end) {
        end = i;
        marker = m;
      }
    }
    out.push({
      channel: /<\|channel\|>([^<\s]+)/.exec(header)?.[1] ?? null,
      recipient: /to=([^\s<]+)/.exec(header)?.[1] ?? null,
      body: text.slice(bodyStart, end),
      raw: text.slice(start, end + marker.length),
    });
    idx = end + marker.length;
  }
  return out;
}

function readCall(m: HarmonyMessage): FamilyToolCall | UnparsedCall {
  const name = m.recipient!.slice('functions.'.length);
  if (!name) return { raw: m.raw, error: 'a tool call without a function name (to=functions.)' };
  let value: unknown;
  try {
    value = JSON.parse(m.body);
  } catch (e) {
    return { raw: m.raw, error: `invalid JSON arguments: ${(e as Error).message}` };
  }
  if (!isObject(value)) return { raw: m.raw, error: 'the arguments are JSON but not an object' };
  // the model's own text, so that 30.0 stays 30.0
  return { id: null, name, arguments: pyStrip(m.body) };
}

interface Read {
  readonly texts: string[];
  readonly thoughts: string[];
  readonly calls: FamilyToolCall[];
  readonly unparsed: UnparsedCall[];
}

function readMessages(text: string): Read {
  const read: Read = { texts: [], thoughts: [], calls: [], unparsed: [] };
  let elsewhere = 0;
  for (const m of harmonyMessages(text)) {
    if (m.recipient !== null && !m.recipient.startsWith('functions.')) {
      // seal declares its tools in `functions` only: a call elsewhere (a bare name, harmony's
      // built-in browser or python) names no tool the rollout has, and its text is no answer
      read.unparsed.push({
        raw: m.raw,
        error: `a call to ${m.recipient}, outside the functions namespace (tools are called as to=functions.NAME)`,
      });
      elsewhere++;
      continue;
    }
    if (!pyStrip(m.body)) continue;
    if (m.recipient?.startsWith('functions.')) {
      const c = readCall(m);
      if ('error' in c) read.unparsed.push(c);
      else read.calls.push(c);
    } else if (m.channel === 'analysis') read.thoughts.push(m.body);
    else if (m.channel === 'final' || m.channel === 'commentary') read.texts.push(m.body);
    // a message on another channel, or none, says nothing the cookbook keeps
  }
  // a call header whose message never came (no body, or the completion returned first) is a call lost
  if (count(text, 'to=functions.') > read.calls.length + read.unparsed.length - elsewhere) {
    const start = text.lastIndexOf(START);
    read.unparsed.push({
      raw: start === -1 ? text : text.slice(start),
      error: "unterminated tool block: a 'to=functions.' call header without its arguments",
    });
  }
  return read;
}

function parse(completion: string): ParsedCompletion {
  const calls = count(completion, CALL);
  const returns = count(completion, RETURN);
  if (calls === 0 && returns === 0)
    // cut off before a stop token: the cookbook reads nothing out of it
    return { content: completion, reasoning: null, toolCalls: [], unparsed: [], ok: false };
  let text: string;
  const problems: UnparsedCall[] = [];
  if (calls > 1 || returns > 1) {
    // sampling stops at the first stop token; the cookbook raises on more, seal reads them all
    text = completion;
    problems.push({
      raw: completion,
      error: `${calls} ${CALL} and ${returns} ${RETURN} in one completion: it should end at the first`,
    });
  } else {
    const ends = [completion.indexOf(CALL), completion.indexOf(RETURN)].filter((i) => i !== -1);
    text = completion.slice(0, Math.min(...ends));
  }
  const read = readMessages(text);
  const unparsed = [...read.unparsed, ...problems];
  const hasParts = read.texts.length > 0 || read.thoughts.length > 0;
  return {
    // With no channel message kept the cookbook's content is the text itself, so a call-only
    // completion's content would be its call markup; seal leaves it empty (the calls are in
    // toolCalls), or the markup would come back as the assistant's text in the next prompt.
    content: hasParts ? read.texts.join('') : read.calls.length > 0 || unparsed.length > 0 ? '' : text,
    reasoning: read.thoughts.length > 0 ? read.thoughts.join('') : null,
    toolCalls: read.calls,
    unparsed,
    ok: unparsed.length === 0,
  };
}

// ---------------------------------------------------------------------------------------------

const todayUtc = (): string => new Date().toISOString().slice(0, 10);

function gptOss(name: RendererName, effort: string | null, options: FamilyOptions): ChatFamily {
  const system: Piece[] =
    effort === null
      ? []
      : [
          { text: `${START}system` },
          { text: `${MESSAGE}${systemPrompt(options.today ?? todayUtc(), effort)}${END}` },
        ];
  return {
    name,
    // the last answer ends <|return|> but <|end|> once it is history
    extension: false,
    stop: [RETURN, CALL],
    toolDeclaration,
    generationPrompt(messages) {
      return [...system, ...conversationPieces(messages), { text: `${START}assistant` }];
    },
    supervised(messages) {
      return [...system, ...conversationPieces(messages)];
    },
    parse,
  };
}

registerFamily('gpt_oss_no_sysprompt', (o) => gptOss('gpt_oss_no_sysprompt', null, o));
registerFamily('gpt_oss_low_reasoning', (o) => gptOss('gpt_oss_low_reasoning', 'low', o));
registerFamily('gpt_oss_medium_reasoning', (o) => gptOss('gpt_oss_medium_reasoning', 'medium', o));
registerFamily('gpt_oss_high_reasoning', (o) => gptOss('gpt_oss_high_reasoning', 'high', o));
