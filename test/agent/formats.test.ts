// @module-tag bfcl-data
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DecodedStep, TOOL_CALL_FORMATS } from '../../src/agent/format.js';
import { COMPACT_SYSTEM_PROMPT, compactToolLine } from '../../src/agent/formats/compact.js';
import { BASE_SYSTEM_PROMPT, formatAdapter, stripThinking } from '../../src/agent/formats/index.js';
import { paramsOfTool } from '../../src/bfcl/trajectory.js';
import { ADDITIONAL_FUNCTION_MESSAGE, visibleFunctions } from '../../src/envs/bfcl/episode.js';
import { toOpenAiTool } from '../../src/envs/bfcl/tools.js';
import { decodePythonCallList } from '../../src/envs/py/calls.js';
import { jsonDumps, repr } from '../../src/envs/py/format.js';
import { calleeName, literalValue, PYTHON_KEYWORDS, parsePythonExpression } from '../../src/envs/py/parse.js';
import type { PyDict } from '../../src/envs/py/values.js';
import type { Completion, NativeToolCall } from '../../src/policy/policy.js';
import { decorateOpenAiTool, REQUIRED_MARK } from '../../src/seal/interface/schema-cues.js';
import { sharedData } from '../support/golden.js';

const data = sharedData();
const native = formatAdapter('native');
const hermes = formatAdapter('hermes');
// the lenient rule (training rollouts); the official one is tested in test/eval/prompting-decode.test.ts
const python = formatAdapter('python', 'lenient');
const pythonOfficial = formatAdapter('python');

const text = (t: string): Completion => ({ text: t, latencyMs: 0 });
const calls = (...c: string[]): DecodedStep => ({ kind: 'calls', calls: c });
const tc = (name: string, args: string, id = `call_${name}`): NativeToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});
const withCalls = (...toolCalls: NativeToolCall[]): Completion => ({ text: '', toolCalls, latencyMs: 0 });
const block = (json: string) => `<tool_call>\n${json}\n</tool_call>`;

function expectParseError(d: DecodedStep, fragment?: string | RegExp): void {
  expect(d.kind).toBe('parse_error');
  if (d.kind === 'parse_error' && fragment !== undefined) expect(d.error).toMatch(fragment);
}

// ---------------------------------------------------------------------------------------------
// Ground truth -> structured form (positional arguments named by the Python signature)

interface Structured {
  readonly name: string;
  readonly args: PyDict;
  /** the ground-truth call through the project's parser, with every argument by name */
  readonly canonical: string;
}

const paramsOf = paramsOfTool(data);

function structured(call: string): Structured {
  const e = parsePythonExpression(call);
  if (e.kind !== 'call') throw new Error(`not a call: ${call}`);
  const name = calleeName(e.callee)!;
  const args: PyDict = new Map();
  e.args.forEach((a, i) => {
    args.set(paramsOf(name)![i]!.name, literalValue(a)!);
  });
  for (const k of e.kwargs) args.set(k.name, literalValue(k.value)!);
  const byName = `${name}(${[...args].map(([k, v]) => `${String(k)}=${repr(v)}`).join(', ')})`;
  const canonical = decodePythonCallList(byName)[0]!;
  if (e.args.length === 0) expect(canonical).toBe(decodePythonCallList(call)[0]);
  return { name, args, canonical };
}

/** every ground-truth turn of every task: a few thousand real calls */
const groundTruthSteps = data.tasks.flatMap((t) => t.groundTruth.filter((turn) => turn.length > 0));

describe('tool-call formats: round trip of the ground truth', () => {
  it('uses a few thousand real calls, some positional, several per step', () => {
    const n = groundTruthSteps.flat().length;
    expect(n).toBeGreaterThan(1000);
    expect(groundTruthSteps.some((s) => s.length > 1)).toBe(true);
    expect(
      groundTruthSteps.flat().some((c) => parsePythonExpression(c).kind === 'call' && /\('/.test(c)),
    ).toBe(true);
  });

  it('native: tool_calls with JSON arguments decode to the ground-truth calls', () => {
    for (const step of groundTruthSteps) {
      const s = step.map(structured);
      const completion = withCalls(...s.map((c, i) => tc(c.name, jsonDumps(c.args), `id${i}`)));
      expect(native.decode(completion), step.join(' ; ')).toEqual(calls(...s.map((c) => c.canonical)));
    }
  });

  it('hermes: <tool_call> blocks decode to the ground-truth calls', () => {
    for (const [k, step] of groundTruthSteps.entries()) {
      const s = step.map(structured);
      const blocks = s.map((c, i) => {
        const key = (k + i) % 3 === 0 ? 'parameters' : 'arguments';
        // every fifth call gives its arguments as a JSON string
        const args = (k + i) % 5 === 0 ? JSON.stringify(jsonDumps(c.args)) : jsonDumps(c.args);
        return block(`{"name": ${JSON.stringify(c.name)}, "${key}": ${args}}`);
      });
      const out =
        k % 2 === 0 ? blocks.join('\n') : `<think>\nplan the calls\n</think>\n\n${blocks.join('\n')}`;
      expect(hermes.decode(text(out)), step.join(' ; ')).toEqual(calls(...s.map((c) => c.canonical)));
    }
  });

  it('python: the call list decodes to the ground-truth calls', () => {
    for (const [k, step] of groundTruthSteps.entries()) {
      const expected = step.flatMap((c) => decodePythonCallList(c));
      const list = `[${step.join(', ')}]`;
      const out = [list, `\`\`\`python\n${list}\n\`\`\``, `<think>ok</think>\n${list}`][k % 3]!;
      expect(python.decode(text(out)), step.join(' ; ')).toEqual(calls(...expected));
      // the by-name form of the same calls decodes to the by-name canonical strings
      const byName = step.map((c) => structured(c).canonical);
      expect(python.decode(text(`[${byName.join(', ')}]`))).toEqual(calls(...byName));
      // the official rule runs the same by-name calls, written with ", " as BFCL writes them
      const official = pythonOfficial.decode(text(`[${byName.join(', ')}]`));
      expect(official.kind).toBe('calls');
      if (official.kind === 'calls')
        expect(official.calls.map((c) => decodePythonCallList(c)[0])).toEqual(byName);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('native format', () => {
  it('decodes one and several tool calls, keeping floats, ints, strings and nesting', () => {
    expect(native.decode(withCalls(tc('cd', '{"folder": "document"}')))).toEqual(
      calls("cd(folder='document')"),
    );
    expect(
      native.decode(
        withCalls(
          tc('mean', '{"numbers": [1, 2.0, 3.5]}'),
          tc('ls', ''),
          tc('post_tweet', '{"content": "hi \\"you\\"", "tags": ["#a"], "mentions": []}'),
          tc('x', '{"d": {"k": null, "b": true}}'),
        ),
      ),
    ).toEqual(
      calls(
        'mean(numbers=[1, 2.0, 3.5])',
        'ls()',
        `post_tweet(content='hi "you"',tags=['#a'],mentions=[])`,
        "x(d={'k': None, 'b': True})",
      ),
    );
  });

  it("a call the family's parser could not read is the turn's parse error, its raw text kept", () => {
    const raw = '<｜tool▁call▁begin｜>cd<｜tool▁sep｜>{"folder": <｜tool▁call▁end｜>';
    const unparsed = [{ raw, error: 'invalid JSON arguments' }];
    const decoded = native.decode({ text: '', unparsedToolCalls: unparsed, latencyMs: 0 });
    expect(decoded.kind).toBe('parse_error');
    expect(decoded.kind === 'parse_error' && decoded.error).toContain(raw);
    // even beside calls that did parse: the turn is not run half-read
    const both = { ...withCalls(tc('cd', '{"folder": "a"}')), unparsedToolCalls: unparsed };
    expect(native.decode(both).kind).toBe('parse_error');
  });

  it('no tool calls is a text answer, whatever the text says', () => {
    expect(native.decode(text('All done.'))).toEqual({ kind: 'text' });
    expect(native.decode(text('[ls()]'))).toEqual({ kind: 'text' });
    expect(native.decode({ text: '', toolCalls: [], latencyMs: 0 })).toEqual({ kind: 'text' });
  });

  it('accepts double-encoded arguments (a JSON string holding the object)', () => {
    expect(native.decode(withCalls(tc('cd', JSON.stringify('{"folder": "a"}'))))).toEqual(
      calls("cd(folder='a')"),
    );
  });

  it('arguments that are not a JSON object are parse errors with the reason', () => {
    expectParseError(
      native.decode(withCalls(tc('cd', '{"folder": "a"'))),
      /arguments of tool call 1 \(cd\) are not valid JSON/,
    );
    expectParseError(native.decode(withCalls(tc('cd', "{'folder': 'a'}"))), /not valid JSON/);
    expectParseError(native.decode(withCalls(tc('cd', '{"x": True}'))), /use JSON true\/false\/null/);
    expectParseError(native.decode(withCalls(tc('cd', '["a"]'))), /not a JSON object/);
    expectParseError(native.decode(withCalls(tc('cd', '3'))), /not a JSON object/);
    expectParseError(
      native.decode(withCalls(tc('ls', '{}'), tc('', '{}'))),
      /tool call 2 has no function name/,
    );
    expectParseError(native.decode(withCalls(tc('cd', '{"a=1, b": 2}'))), /not a valid identifier/);
    expectParseError(native.decode(withCalls(tc('os.system("x")', '{}'))), /not a valid identifier/);
  });

  it('presents tools through the request, not the prompt', () => {
    const tools = visibleFunctions(data.tasks[0]!, data, 0).map(toOpenAiTool);
    expect(native.requestTools(tools)).toBe(tools);
    const prompt = native.systemPrompt(tools);
    expect(prompt).toBe(BASE_SYSTEM_PROMPT);
    expect(prompt).not.toContain('"parameters"');
    for (const t of tools) expect(prompt).not.toContain(t.function.description);
  });

  it('writes the assistant message with tool_calls and answers each call with a tool message', () => {
    const c = withCalls(tc('cd', '{"folder": "a"}', 'A'), tc('ls', '{}', 'B'));
    expect(native.assistantMessage(c)).toEqual({ role: 'assistant', content: null, tool_calls: c.toolCalls });
    const d = native.decode(c);
    expect(native.toolResultMessages(c, d, ['r1', 'r2'])).toEqual([
      { role: 'tool', tool_call_id: 'A', content: 'r1' },
      { role: 'tool', tool_call_id: 'B', content: 'r2' },
    ]);
    expect(() => native.toolResultMessages(c, d, ['r1'])).toThrow();
    expect(native.assistantMessage(text('hello'))).toEqual({ role: 'assistant', content: 'hello' });
    expect(native.toolResultMessages(text('hello'), { kind: 'text' }, [])).toEqual([]);
  });

  it('gives missing or repeated call ids distinct stand-ins, the same in both messages', () => {
    const c = withCalls(tc('cd', '{}', ''), tc('ls', '{}', 'X'), tc('pwd', '{}', 'X'));
    const msg = native.assistantMessage(c);
    const ids = msg.role === 'assistant' ? (msg.tool_calls ?? []).map((t) => t.id) : [];
    expect(new Set(ids).size).toBe(3);
    const results = native.toolResultMessages(c, native.decode(c), ['1', '2', '3']);
    expect(results.map((m) => (m.role === 'tool' ? m.tool_call_id : ''))).toEqual(ids);
  });

  it('answers a parse error so that the history stays valid', () => {
    const bad = withCalls(tc('cd', '{', 'A'), tc('ls', '{}', 'B'));
    const d = native.decode(bad);
    expectParseError(d);
    const err = d.kind === 'parse_error' ? d.error : '';
    expect(native.parseErrorMessage(bad, err)).toEqual([
      { role: 'tool', tool_call_id: 'A', content: `[ERROR] Invalid tool call format: ${err}` },
      { role: 'tool', tool_call_id: 'B', content: `[ERROR] Invalid tool call format: ${err}` },
    ]);
    expect(native.parseErrorMessage(text('x'), 'boom')).toEqual([
      { role: 'user', content: '[ERROR] Invalid tool call format: boom' },
    ]);
  });

  it('reveals added functions with the fixed sentence only (the tools arrive in `tools`)', () => {
    const added = [data.docs.get('sort')!.doc].map(toOpenAiTool);
    expect(native.addedFunctionsMessage(added, ADDITIONAL_FUNCTION_MESSAGE)).toBe(
      ADDITIONAL_FUNCTION_MESSAGE,
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('hermes format', () => {
  const cd = block('{"name": "cd", "arguments": {"folder": "document"}}');
  const ls = block('{"name": "ls", "arguments": {}}');

  it('decodes one and several blocks in order', () => {
    expect(hermes.decode(text(cd))).toEqual(calls("cd(folder='document')"));
    expect(hermes.decode(text(`${cd}\n${ls}`))).toEqual(calls("cd(folder='document')", 'ls()'));
    expect(hermes.decode(text(`${cd}${ls}${cd}`))).toEqual(
      calls("cd(folder='document')", 'ls()', "cd(folder='document')"),
    );
    expect(
      hermes.decode(text('<tool_call>{"name":"mean","arguments":{"numbers":[1,2.0]}}</tool_call>')),
    ).toEqual(calls('mean(numbers=[1, 2.0])'));
  });

  it('ignores think blocks and any tool calls inside them', () => {
    expect(hermes.decode(text(`<think>\nmaybe ${ls}?\n</think>\n\n${cd}`))).toEqual(
      calls("cd(folder='document')"),
    );
    // the chat template opened the block in the prompt: only a closing tag appears
    expect(hermes.decode(text(`I could call ${ls}\n</think>\n${cd}`))).toEqual(
      calls("cd(folder='document')"),
    );
    // cut off while thinking
    expect(hermes.decode(text(`<think>\nfirst ${cd}`))).toEqual({ kind: 'text' });
    expect(hermes.decode(text(`<think>only thoughts</think>\nNothing to call.`))).toEqual({ kind: 'text' });
  });

  it('tolerates code fences, surrounding text, "parameters", string arguments, missing arguments', () => {
    expect(
      hermes.decode(
        text('<tool_call>\n```json\n{"name": "cd", "arguments": {"folder": "a"}}\n```\n</tool_call>'),
      ),
    ).toEqual(calls("cd(folder='a')"));
    expect(hermes.decode(text(`Sure, let me look.\n${cd}\nThat should do it.`))).toEqual(
      calls("cd(folder='document')"),
    );
    expect(hermes.decode(text(`\`\`\`\n${cd}\n\`\`\``))).toEqual(calls("cd(folder='document')"));
    expect(hermes.decode(text(block('{"name": "cd", "parameters": {"folder": "a"}}')))).toEqual(
      calls("cd(folder='a')"),
    );
    expect(hermes.decode(text(block('{"name": "cd", "arguments": "{\\"folder\\": \\"a\\"}"}')))).toEqual(
      calls("cd(folder='a')"),
    );
    expect(hermes.decode(text(block('{"name": "ls"}')))).toEqual(calls('ls()'));
    expect(hermes.decode(text(block('{"name": "ls", "arguments": ""}')))).toEqual(calls('ls()'));
    expect(hermes.decode(text(block('{"name": "ls", "arguments": null}')))).toEqual(calls('ls()'));
    expect(
      hermes.decode(
        text(block('[{"name": "cd", "arguments": {"folder": "a"}}, {"name": "ls", "arguments": {}}]')),
      ),
    ).toEqual(calls("cd(folder='a')", 'ls()'));
  });

  it('accepts an unclosed block only when its JSON is complete', () => {
    expect(hermes.decode(text('<tool_call>\n{"name": "ls", "arguments": {}}'))).toEqual(calls('ls()'));
    expect(hermes.decode(text(`${cd}\n<tool_call>\n{"name": "ls", "arguments": {}}\n`))).toEqual(
      calls("cd(folder='document')", 'ls()'),
    );
    // a second <tool_call> used as the closing tag
    expect(hermes.decode(text('<tool_call>{"name": "ls", "arguments": {}}<tool_call>'))).toEqual(
      calls('ls()'),
    );
    expectParseError(
      hermes.decode(text('<tool_call>\n{"name": "cd", "arguments": {"folder": "doc')),
      /not closed by <\/tool_call> and its JSON is incomplete/,
    );
  });

  it('text without blocks is a text answer', () => {
    expect(hermes.decode(text('The file is in /tmp.'))).toEqual({ kind: 'text' });
    expect(hermes.decode(text(''))).toEqual({ kind: 'text' });
    expect(hermes.decode(text('{"name": "ls", "arguments": {}}'))).toEqual({ kind: 'text' });
    expect(hermes.decode(text('[ls()]'))).toEqual({ kind: 'text' });
  });

  it('malformed blocks are parse errors naming the reason', () => {
    expectParseError(
      hermes.decode(text(block('{"name": "cd", "arguments": {"folder": "a"}'))),
      /block 1 is not valid JSON/,
    );
    expectParseError(
      hermes.decode(text(`${cd}\n${block('{"arguments": {}}')}`)),
      /block 2 has no "name" string/,
    );
    expectParseError(hermes.decode(text(block('{"name": 3, "arguments": {}}'))), /no "name" string/);
    expectParseError(
      hermes.decode(text(block('{"name": "cd", "arguments": [1]}'))),
      /arguments of cd are not a JSON object/,
    );
    expectParseError(hermes.decode(text(block('{"name": "cd", "arguments": "folder=a"}'))), /not valid JSON/);
    expectParseError(hermes.decode(text(block("{'name': 'cd', 'arguments': {}}"))), /not valid JSON/);
    expectParseError(
      hermes.decode(text(block('{"name": "cd", "arguments": {"x": True}}'))),
      /JSON true\/false\/null/,
    );
    expectParseError(hermes.decode(text(block('"cd"'))), /not a JSON object/);
    expectParseError(hermes.decode(text('<tool_call></tool_call>')), /empty/);
    expectParseError(hermes.decode(text('<tool_call>')), /empty/);
    expectParseError(
      hermes.decode(text('{"name": "ls", "arguments": {}}\n</tool_call>')),
      /without an opening/,
    );
    expectParseError(
      hermes.decode(text(block('{"name": "ls()\\nrm", "arguments": {}}'))),
      /not a valid identifier/,
    );
    expectParseError(
      hermes.decode(text(block('{"name": "cd", "arguments": {"a) or (b": 1}}'))),
      /not a valid identifier/,
    );
  });

  it('renders the tools in the system prompt, one JSON schema per line, with the call protocol', () => {
    const tools = visibleFunctions(data.byId.get('multi_turn_base_0')!, data, 0).map(toOpenAiTool);
    const prompt = hermes.systemPrompt(tools);
    expect(prompt.startsWith(BASE_SYSTEM_PROMPT)).toBe(true);
    expect(prompt).toContain('# Tools');
    expect(prompt).toContain(
      '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
    );
    const inside = prompt.slice(prompt.indexOf('<tools>\n') + 8, prompt.indexOf('\n</tools>')).split('\n');
    expect(inside.map((l) => JSON.parse(l))).toEqual(tools);
    for (const t of tools) expect(prompt).toContain(`"name": "${t.function.name}"`);
    expect(hermes.requestTools(tools)).toBeUndefined();
  });

  it('sends results back as one user message of <tool_response> blocks, in order', () => {
    const c = text(`${cd}\n${ls}`);
    const d = hermes.decode(c);
    expect(hermes.assistantMessage(c)).toEqual({ role: 'assistant', content: c.text });
    expect(hermes.toolResultMessages(c, d, ['{"a": 1}', 'x'])).toEqual([
      {
        role: 'user',
        content: '<tool_response>\n{"a": 1}\n</tool_response>\n<tool_response>\nx\n</tool_response>',
      },
    ]);
    expect(() => hermes.toolResultMessages(c, d, ['only one'])).toThrow();
    expect(hermes.parseErrorMessage(c, 'bad')).toEqual([
      { role: 'user', content: '[ERROR] Invalid tool call format: bad' },
    ]);
  });

  it('reveals added functions with their schemas, then the fixed sentence', () => {
    const added = [data.docs.get('sort')!.doc, data.docs.get('wc')!.doc].map(toOpenAiTool);
    const msg = hermes.addedFunctionsMessage(added, ADDITIONAL_FUNCTION_MESSAGE);
    expect(msg.endsWith(`</tools>\n${ADDITIONAL_FUNCTION_MESSAGE}`)).toBe(true);
    const lines = msg.split('\n');
    expect(lines[0]).toBe('<tools>');
    expect(JSON.parse(lines[1]!)).toEqual(added[0]);
    expect(JSON.parse(lines[2]!)).toEqual(added[1]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('python format', () => {
  it('decodes one and several calls', () => {
    expect(python.decode(text("[cd(folder='document')]"))).toEqual(calls("cd(folder='document')"));
    expect(python.decode(text("[cd(folder='document'), ls(a=True), mean(numbers=[1, 2.0])]"))).toEqual(
      calls("cd(folder='document')", 'ls(a=True)', 'mean(numbers=[1, 2.0])'),
    );
    expect(python.decode(text('ls()'))).toEqual(calls('ls()'));
    expect(python.decode(text("cd(folder='a'), ls()"))).toEqual(calls("cd(folder='a')", 'ls()'));
  });

  it('strips think blocks, code fences and prose around a delimited list', () => {
    expect(python.decode(text("<think>\nI should [ls()] first\n</think>\n[cd(folder='a')]"))).toEqual(
      calls("cd(folder='a')"),
    );
    expect(python.decode(text("reasoning\n</think>\n\n[cd(folder='a')]"))).toEqual(calls("cd(folder='a')"));
    expect(python.decode(text("```python\n[cd(folder='a')]\n```"))).toEqual(calls("cd(folder='a')"));
    expect(python.decode(text("```\ncd(folder='a')\n```"))).toEqual(calls("cd(folder='a')"));
    expect(python.decode(text("```[cd(folder='a')]```"))).toEqual(calls("cd(folder='a')"));
    expect(
      python.decode(text("Let me go there first.\n```python\n[cd(folder='a')]\n```\nThen I will list.")),
    ).toEqual(calls("cd(folder='a')"));
    expect(
      python.decode(text("I will move into the folder:\n[cd(folder='a')]\nand then report back.")),
    ).toEqual(calls("cd(folder='a')"));
    expect(python.decode(text("Plan:\n[\n  cd(folder='a]'),\n  ls()\n]\nDone."))).toEqual(
      calls("cd(folder='a]')", 'ls()'),
    );
    expect(python.decode(text("[cd(folder='a')]\n[ls()]"))).toEqual(calls("cd(folder='a')", 'ls()'));
  });

  it('text that does not look like a call list is a text answer', () => {
    for (const t of [
      'The current directory contains report.pdf.',
      'I cannot do that: no function fits (sorry).',
      '[Note] nothing to do here',
      '[1, 2, 3]',
      '```python\nimport os\nx = 1\n```',
      '',
      '<think>hmm</think>',
      '[]',
      'You can call ls() to list files.',
    ])
      expect(python.decode(text(t)), t).toEqual({ kind: 'text' });
  });

  it('a call list that does not parse is a parse error carrying the parser message', () => {
    expectParseError(python.decode(text("[cd(folder='a')")), /./);
    expectParseError(python.decode(text("[cd(folder='a'))]")), /syntax|unmatched|parenthesis/i);
    expectParseError(python.decode(text('[cd(folder=os.getcwd())]')), /not a literal/);
    expectParseError(python.decode(text('[cd(folder=1+2)]')), /not a literal/);
    expectParseError(python.decode(text("```python\n[cd(folder='a'), 3]\n```")), /not a function call/);
    expectParseError(python.decode(text("cd(folder='a') and then ls()")), /./);
    const d = python.decode(text("[cd(folder='a',]"));
    let message = '';
    try {
      decodePythonCallList("[cd(folder='a',]");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(d).toEqual({ kind: 'parse_error', error: message });
  });

  it('never evaluates: hostile calls decode to strings or errors', () => {
    expect(python.decode(text("[__import__('os').system('echo pwned')]"))).toMatchObject({
      kind: 'parse_error',
    });
    expect(python.decode(text("[exec('import os')]"))).toEqual(calls("exec('import os')"));
  });

  it('renders the docs as JSON with the BFCL call format', () => {
    const tools = visibleFunctions(data.byId.get('multi_turn_base_100')!, data, 0).map(toOpenAiTool);
    const prompt = python.systemPrompt(tools);
    expect(prompt.startsWith(BASE_SYSTEM_PROMPT)).toBe(true);
    expect(prompt).toContain(
      '[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]',
    );
    const docs = JSON.parse(prompt.slice(prompt.indexOf('\n[\n') + 1));
    expect(docs).toEqual(tools.map((t) => t.function));
    for (const t of tools) expect(prompt).toContain(`"name": "${t.function.name}"`);
    expect(python.requestTools(tools)).toBeUndefined();
  });

  it('sends results back as one user message pairing each call with its result', () => {
    const c = text("[cd(folder='a'), ls()]");
    const d = python.decode(c);
    const [msg, ...rest] = python.toolResultMessages(c, d, [
      '{"current_working_directory": "a"}',
      '{"x": []}',
    ]);
    expect(rest).toEqual([]);
    expect(msg).toEqual({
      role: 'user',
      content:
        'Results of your function calls, in order:\n\n' +
        `cd(folder='a')\n{"current_working_directory": "a"}\n\nls()\n{"x": []}`,
    });
    expect(python.toolResultMessages(c, { kind: 'text' }, [])).toEqual([]);
    expect(python.parseErrorMessage(c, 'oops')).toEqual([
      { role: 'user', content: '[ERROR] Invalid tool call format: oops' },
    ]);
  });

  it('reveals added functions as the docs JSON, a newline, then the fixed sentence', () => {
    const added = [data.docs.get('sort')!.doc].map(toOpenAiTool);
    const msg = python.addedFunctionsMessage(added, ADDITIONAL_FUNCTION_MESSAGE);
    const [json, sentence] = [msg.slice(0, msg.lastIndexOf('\n')), msg.slice(msg.lastIndexOf('\n') + 1)];
    expect(sentence).toBe(ADDITIONAL_FUNCTION_MESSAGE);
    expect(JSON.parse(json)).toEqual([added[0]!.function]);
  });
});

describe('compact format', () => {
  const compact = formatAdapter('compact');

  it('writes each tool on one line: name, typed arguments (optional ones marked), every description', () => {
    const tools = [
      toOpenAiTool({
        name: 'wc',
        description: 'Count lines,\n words or characters.',
        parameters: {
          type: 'dict',
          properties: {
            file_name: { type: 'string' },
            mode: { type: 'string', description: 'l, w or c' },
            limits: { type: 'array', items: { type: 'float' } },
            order: { type: 'string', enum: ['asc', 'desc'] },
            owner: {
              type: 'dict',
              properties: { name: { type: 'string', description: 'full name' }, age: { type: 'integer' } },
              required: ['name'],
            },
          },
          required: ['file_name', 'limits'],
        },
      }),
    ];
    expect(compactToolLine(tools[0]!)).toBe(
      'wc(file_name: str, mode?: str, limits: list[float], order?: "asc"|"desc", ' +
        'owner?: dict{name: str, age?: int}) Count lines, words or characters. mode: l, w or c; owner.name: full name',
    );
    const prompt = compact.systemPrompt(tools);
    expect(prompt).toBe(`${COMPACT_SYSTEM_PROMPT}\n\nFunctions:\n${compactToolLine(tools[0]!)}`);
    expect(compact.requestTools(tools)).toBeUndefined();
  });

  it('keeps every interface cue (cues live in descriptions) and is far shorter than the JSON docs', () => {
    const task = data.byId.get('multi_turn_base_100')!;
    const tools = visibleFunctions(task, data, 0).map(toOpenAiTool);
    const cued = tools.map((t) =>
      decorateOpenAiTool(t, { requiredMarks: true, allowedValues: true, types: true }),
    );
    const prompt = compact.systemPrompt(cued);
    for (const t of cued) {
      expect(prompt).toContain(`${t.function.name}(`);
      for (const p of Object.values(t.function.parameters.properties ?? {})) {
        if (p.description) expect(prompt).toContain(p.description.replace(/\s+/g, ' ').trim());
      }
    }
    expect(prompt).toContain(REQUIRED_MARK);
    expect(compact.systemPrompt(tools).length).toBeLessThan(python.systemPrompt(tools).length * 0.6);
  });

  it('calls, results, parse errors and revealed functions work as in the python format', () => {
    const c = text("I will look.\n[cd(folder='a'), ls(a=True)]");
    const d = compact.decode(c);
    expect(d).toEqual(calls("cd(folder='a')", 'ls(a=True)'));
    expect(compact.toolResultMessages(c, d, ['1', '2'])).toEqual(python.toolResultMessages(c, d, ['1', '2']));
    expectParseError(compact.decode(text("[cd(folder='a'")));
    expect(compact.decode(text('No function fits.'))).toEqual({ kind: 'text' });
    const added = [data.docs.get('sort')!.doc].map(toOpenAiTool);
    expect(compact.addedFunctionsMessage(added, ADDITIONAL_FUNCTION_MESSAGE)).toBe(
      `${compactToolLine(added[0]!)}\n${ADDITIONAL_FUNCTION_MESSAGE}`,
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('stripThinking', () => {
  it('drops closed blocks, a prefix closed without an opening, and an unclosed tail', () => {
    expect(stripThinking('a<think>x</think>b<think>y</think>c')).toBe('abc');
    expect(stripThinking('reasoning</think>answer')).toBe('answer');
    expect(stripThinking('answer<think>cut off')).toBe('answer');
    expect(stripThinking('<thinking>x</thinking>done')).toBe('done');
    expect(stripThinking('no tags')).toBe('no tags');
  });
});

// ---------------------------------------------------------------------------------------------

describe('tool-call formats: hostile output never throws', () => {
  const fragments = [
    '<tool_call>',
    '</tool_call>',
    '<think>',
    '</think>',
    '```',
    '```python\n',
    '```json\n',
    '[',
    ']',
    '(',
    ')',
    '{',
    '}',
    '"',
    "'",
    '"""',
    '\\',
    '\n',
    ' ',
    ',',
    ':',
    '=',
    'ls',
    'cd',
    'name',
    '"name"',
    '"arguments"',
    '"parameters"',
    'folder',
    'True',
    'None',
    'null',
    '1.0',
    '-1e400',
    'NaN',
    '__import__',
    'os.system',
    '*',
    'lambda',
  ];
  const hostile = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.array(fc.constantFrom(...fragments), { maxLength: 60 }).map((a) => a.join('')),
  );

  function wellFormed(d: DecodedStep): void {
    expect(['calls', 'text', 'parse_error']).toContain(d.kind);
    if (d.kind === 'calls') for (const c of d.calls) expect(typeof c).toBe('string');
    if (d.kind === 'parse_error') expect(d.error.length).toBeGreaterThan(0);
  }

  it('text formats decode any string', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        for (const f of TOOL_CALL_FORMATS) wellFormed(formatAdapter(f).decode(text(s)));
      }),
      { numRuns: 3000 },
    );
  });

  it('native decodes any tool call names and arguments', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(hostile, hostile), { maxLength: 4 }), (pairs) => {
        wellFormed(native.decode(withCalls(...pairs.map(([n, a], i) => tc(n, a, `c${i}`)))));
      }),
      { numRuns: 1000 },
    );
  });

  it('decoded calls are canonical call strings (they parse back to themselves)', () => {
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.string(), tie('v'), { maxKeys: 3 }),
      ),
    })).v;
    // keywords are not names (the decoders refuse `or(...)`, as Python would)
    const ident = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/).filter((s) => !PYTHON_KEYWORDS.has(s));
    fc.assert(
      fc.property(ident, fc.dictionary(ident, value, { maxKeys: 4 }), (name, args) => {
        const json = JSON.stringify(args);
        const out = [
          native.decode(withCalls(tc(name, json))),
          hermes.decode(text(block(`{"name": ${JSON.stringify(name)}, "arguments": ${json}}`))),
        ];
        for (const d of out) {
          expect(d.kind).toBe('calls');
          if (d.kind === 'calls') {
            expect(decodePythonCallList(d.calls[0]!)).toEqual(d.calls);
            expect(python.decode(text(`[${d.calls[0]}]`))).toEqual(d);
          }
        }
        expect(out[0]).toEqual(out[1]);
      }),
      { numRuns: 500 },
    );
  });

  it('deeply nested or long input is an error or text, quickly', () => {
    const deep = '['.repeat(200_000);
    const t0 = Date.now();
    expectParseError(hermes.decode(text(`<tool_call>${deep}`)));
    expectParseError(hermes.decode(text(`<tool_call>{"name": "ls", "arguments": ${deep}</tool_call>`)));
    expectParseError(python.decode(text(`[ls(a=${deep}`)));
    expectParseError(native.decode(withCalls(tc('ls', deep))));
    for (const f of TOOL_CALL_FORMATS) {
      wellFormed(formatAdapter(f).decode(text('<think>'.repeat(50_000))));
      wellFormed(formatAdapter(f).decode(text('<tool_call>'.repeat(50_000))));
      wellFormed(formatAdapter(f).decode(text('[ls(\n'.repeat(50_000))));
      wellFormed(formatAdapter(f).decode(text('```\n'.repeat(50_000))));
      wellFormed(formatAdapter(f).decode(text("'".repeat(100_000))));
    }
    expect(Date.now() - t0).toBeLessThan(20_000);
  });
});
