/**
 * Qwen3.5's format, as the cookbook's qwen3_5.py renderers write it: Qwen3's ChatML turns with a
 * different tool convention. Tools are declared as plain JSON lines before the system prompt, and a
 * call is XML-like, one parameter a block, a scalar written bare:
 *
 *     <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
 *
 * - qwen3_5: the generation prompt ends `<think>\n`, so the model starts inside its reasoning; an
 *   assistant turn after the last user message that did not reason gets an empty
 *   `<think>\n\n</think>\n\n`; reasoning is dropped from every assistant turn but the last, so later
 *   prompts do not extend earlier ones (no one sequence across turns).
 * - qwen3_5_disable_thinking: the prompt closes an empty block instead; a turn that reasoned is refused.
 *
 * Typing, as the cookbook does it: a parameter is written with Python's `str()` when it is a scalar
 * (so `true` becomes `True`, `null` becomes `None`) and `json.dumps` when it is an object or a list;
 * it is read back as JSON when it parses as JSON and as a string otherwise. So a string parameter
 * holding `123` comes back a number and a boolean comes back the string "True": the cookbook's
 * round trip, kept so that seal trains and reads exactly what Tinker's renderer does. Qwen3's JSON
 * `<tool_call>` form is read too (the cookbook's parser tries it first).
 *
 * Where the cookbook differs from the Hugging Face template: the template keeps the reasoning of
 * assistant turns after the last user message, the cookbook drops it from all history (and then
 * writes no empty block either for a history turn that had reasoning). Unlike Qwen3's renderer,
 * this one encodes each message in one piece with special tokens live (the cookbook merges a
 * message's text with its `<|im_end|>`), and trims string content as the template does. Qwen3.5's
 * vocabulary is not on npm, so this family is checked on text only.
 */
import {
  type FamilyMessage,
  type FamilyToolCall,
  RenderRefused,
  type ToolSpec,
  type UnparsedCall,
} from './family.js';
import { registerFamily } from './index.js';
import { dumps, fromJs, jsonString, PY_SPACE, parseJson, pyStrip, stripChars, tagText } from './python.js';
import {
  callArguments,
  hasThinking,
  header,
  IM_END,
  parseBody,
  parsedCompletion,
  type QwenParse,
  type QwenRenderer,
  qwenFamily,
  qwenRole,
  splitAtStop,
  truncated,
  UNTERMINATED,
} from './qwen3.js';

const EMPTY_BLOCK = '<think>\n\n</think>\n\n';

function writeCall(call: FamilyToolCall): string {
  const args = call.arguments === '' ? undefined : callArguments(call, 'qwen3_5');
  if (args !== undefined && !(args instanceof Map))
    throw new RenderRefused(
      `qwen3_5 writes a call's arguments one by one: those of ${call.name} are not an object`,
    );
  const lines = [`<tool_call>\n<function=${call.name}>`];
  for (const [key, value] of args ?? [])
    lines.push(`<parameter=${String(key)}>\n${tagText(value)}\n</parameter>`);
  lines.push('</function>\n</tool_call>');
  return lines.join('\n');
}

function toolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[] {
  let toolsText = '';
  if (tools.length > 0) {
    const lines = tools.map((t) => dumps(fromJs(t))).join('\n');
    toolsText = `# Tools

You have access to the following functions:

<tools>
${lines}
</tools>

If you choose to call a function ONLY reply in the following format with NO suffix:

<tool_call>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
<parameter=example_parameter_2>
This is the value for the second parameter
that can span
multiple lines
</parameter>
</function>
</tool_call>

<IMPORTANT>
Reminder:
- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags
- Required parameters MUST be specified
- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after
- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls
</IMPORTANT>`;
  }
  const content = toolsText ? (systemPrompt ? `${toolsText}\n\n${systemPrompt}` : toolsText) : systemPrompt;
  return [{ role: 'system', content }];
}

// Python's `\s` is its own set of characters (str.isspace), so the patterns spell it out
const S = `[${PY_SPACE}]`;
const FUNCTION_BLOCK = new RegExp(
  `^${S}*<tool_call>${S}*<function=([^>\\n]+)>${S}*([\\s\\S]*?)${S}*</function>${S}*</tool_call>${S}*$`,
);
const PARAM_BLOCK = new RegExp(`<parameter=([^>\\n]+)>${S}*([\\s\\S]*?)${S}*</parameter>`, 'g');

/**
 * A `<tool_call>` block in the XML form. A value is its JSON text when it parses as JSON (kept as
 * the model wrote it, so `30.0` stays `30.0`) and a JSON string otherwise; a repeated parameter
 * keeps its first place and its last value, as the cookbook's dict does.
 */
function xmlCall(raw: string): FamilyToolCall | UnparsedCall {
  const m = FUNCTION_BLOCK.exec(raw);
  if (!m) return { raw, error: 'Malformed Qwen3.5 tool call XML' };
  const name = pyStrip(m[1]!);
  const body = m[2]!;
  if (name === '') return { raw, error: 'Missing function name' };
  const args = new Map<string, string>();
  let pos = 0;
  for (const p of body.matchAll(PARAM_BLOCK)) {
    if (pyStrip(body.slice(pos, p.index)) !== '')
      return { raw, error: 'Unexpected non-parameter content inside <function> block' };
    const key = pyStrip(p[1]!);
    const text = stripChars(p[2]!, '\n');
    if (key === '') return { raw, error: 'Empty parameter name' };
    const parsed = parseJson(text);
    args.set(key, 'error' in parsed ? jsonString(text) : text.slice(parsed.start, parsed.end));
    pos = p.index + p[0].length;
  }
  if (pyStrip(body.slice(pos)) !== '')
    return { raw, error: 'Unexpected trailing content inside <function> block' };
  const json = [...args].map(([k, v]) => `${jsonString(k)}: ${v}`).join(', ');
  return { id: null, name, arguments: `{${json}}` };
}

/**
 * What Qwen3.5's parser adds to Qwen3's: reasoning trimmed as the template trims it, the two
 * newlines after `</think>` taken off, and the `<tool_call>` blocks Qwen3's JSON reading rejected
 * read as XML (after the JSON calls, as the cookbook appends them).
 */
function postprocess(p: QwenParse): QwenParse {
  let seenThinking = false;
  for (const part of p.parts) {
    if (part.type === 'thinking') {
      part.text = pyStrip(part.text);
      seenThinking = true;
    } else if (seenThinking) {
      if (part.text.startsWith('\n\n')) part.text = part.text.slice(2);
      break;
    }
  }
  const calls = [...p.calls];
  const unparsed: UnparsedCall[] = [];
  for (const u of p.unparsed) {
    if (u.error.startsWith(UNTERMINATED) || !u.raw.includes('<function=')) unparsed.push(u);
    else {
      const call = xmlCall(u.raw);
      if ('error' in call) unparsed.push(call);
      else calls.push(call);
    }
  }
  return { parts: p.parts, calls, unparsed };
}

type Qwen35Variant = 'qwen3_5' | 'qwen3_5_disable_thinking';

function qwen35Renderer(name: Qwen35Variant): QwenRenderer {
  const disablesThinking = name === 'qwen3_5_disable_thinking';
  const generationSuffix = (idx: number) =>
    header('assistant', idx) + (disablesThinking ? EMPTY_BLOCK : '<think>\n');
  return {
    name,
    extension: false,
    disablesThinking,
    generationSuffix,
    toolDeclaration,
    renderMessage(message, ctx) {
      const m = message.thinking === undefined ? { ...message, content: pyStrip(message.content) } : message;
      const assistant = m.role === 'assistant';
      const tool = m.role === 'tool';
      // a run of tool results shares one user turn: the next result only starts a new line
      let head: string;
      if (tool && ctx.prev?.role === 'tool') head = '\n';
      else {
        head = header(qwenRole(m), ctx.idx);
        if (assistant && ctx.idx > ctx.lastUser && !hasThinking(m)) head += EMPTY_BLOCK;
      }
      const keepThinking = !(assistant && !ctx.isLast);
      let output =
        m.thinking !== undefined && keepThinking
          ? `<think>\n${m.thinking}\n</think>\n\n${m.content}`
          : m.content;
      if (tool) output = `<tool_response>\n${output}\n</tool_response>`;
      if (m.toolCalls !== undefined)
        output += (pyStrip(m.content) !== '' ? '\n\n' : '') + m.toolCalls.map(writeCall).join('\n');
      if (!(tool && ctx.next?.role === 'tool')) output += IM_END;
      // The turn being produced is sampled after the prompt's `<think>` prefill, so the header
      // stops where the prompt does and the rest of it is the turn's own output.
      const pieces = [{ text: output }];
      if (assistant && ctx.isLast) {
        const prefix = generationSuffix(ctx.idx);
        if (head.startsWith(prefix)) {
          const rest = head.slice(prefix.length);
          if (rest !== '') pieces.unshift({ text: rest });
          head = prefix;
        }
      }
      return { header: { text: head }, output: pieces };
    },
    parse(completion) {
      // the prompt's `<think>\n` prefill is not in the completion; put it back for the parser
      const text =
        !completion.startsWith('<think>\n') && completion.includes('</think>')
          ? `<think>\n${completion}`
          : completion;
      const { body, stops } = splitAtStop(text);
      if (stops === 0) return truncated(text);
      return parsedCompletion(postprocess(parseBody(body, true)), stops === 1);
    },
  };
}

for (const name of ['qwen3_5', 'qwen3_5_disable_thinking'] as const)
  registerFamily(name, () => qwenFamily(qwen35Renderer(name)));
