import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type FamilyMessage, RenderRefused, type ToolSpec } from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { PyFloat, type TemplateValue } from '../../../src/render/renderer.js';
import { ChatTemplate, TemplateError } from '../../../src/render/template.js';
import { describeGoldens } from './check.js';
import { idsOf, joined, loadGoldens, realEncoder } from './goldens.js';

// The cookbook's llama3 renders text turns only; its goldens check those. Tool declarations,
// calls and results follow Llama 3.1's Hugging Face template and are checked below against it.
describeGoldens('llama3', { ownToolTurns: true });

/**
 * Llama-3.1-8B-Instruct's own chat template, run by seal's jinja, where a copy is at hand: a
 * `chat_template.jinja`, or the model's `tokenizer_config.json`, named by LLAMA31_CHAT_TEMPLATE
 * (the npm tokenizer package carries Llama 3.0's shorter template, and the template is Meta's,
 * not seal's, so it is not in the repository). Without it, the renderings are held to
 * test/fixtures/renderers/llama3-tools-rendered.json: seal's own output, written when it matched
 * the template token for token.
 */
const TEMPLATE_FILE = process.env.LLAMA31_CHAT_TEMPLATE ?? '';
function loadTemplate(): ChatTemplate | undefined {
  if (TEMPLATE_FILE === '' || !existsSync(TEMPLATE_FILE)) return undefined;
  const text = readFileSync(TEMPLATE_FILE, 'utf8');
  return new ChatTemplate(
    TEMPLATE_FILE.endsWith('.json')
      ? String((JSON.parse(text) as { chat_template: string }).chat_template)
      : text,
  );
}
const TEMPLATE = loadTemplate();
const RENDERED = JSON.parse(
  readFileSync(new URL('../../fixtures/renderers/llama3-tools-rendered.json', import.meta.url), 'utf8'),
) as Record<string, string>;

const goldens = loadGoldens();
const enc = realEncoder('llama3')!;
const family = chatFamily('llama3');

/** a chat the way transformers hands it to the template: OpenAI tools, arguments as dicts */
function hfRender(
  messages: readonly FamilyMessage[],
  tools: readonly ToolSpec[],
  argumentValues: ReadonlyMap<string, TemplateValue>,
  addGenerationPrompt: boolean,
  dateString?: string,
): string {
  const hfMessages = messages.map((m) => ({
    role: m.role,
    content: m.content,
    ...(m.toolCalls
      ? {
          tool_calls: m.toolCalls.map((c) => ({
            type: 'function',
            function: { name: c.name, arguments: argumentValues.get(c.arguments)! },
          })),
        }
      : {}),
  }));
  if (!TEMPLATE) throw new Error('no Llama 3.1 template (LLAMA31_CHAT_TEMPLATE)');
  return TEMPLATE.render({
    messages: hfMessages,
    tools: tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters as TemplateValue },
    })),
    tools_in_user_message: false,
    add_generation_prompt: addGenerationPrompt,
    bos_token: '<|begin_of_text|>',
    date_string: dateString,
  });
}

// the arguments as a model writes them (json.dumps layout) and as the template's dicts
const CD = '{"folder": "documents"}';
const ORDER = '{"order_type": "Buy", "symbol": "AAPL", "price": 30.0, "amount": 100}';
const FLIGHT = '{"access_token": "abc123", "travel_cost": 450.5, "passengers": ["Zoë", "東京"]}';
const ARGUMENTS = new Map<string, TemplateValue>([
  [CD, { folder: 'documents' }],
  [ORDER, { order_type: 'Buy', symbol: 'AAPL', price: new PyFloat(30), amount: 100 }],
  [FLIGHT, { access_token: 'abc123', travel_cost: 450.5, passengers: ['Zoë', '東京'] }],
]);

const CONVERSATION: FamilyMessage[] = [
  { role: 'user', content: 'Go into "documents", buy 100 AAPL at 30.0, then book a flight for « Zoë ».' },
  { role: 'assistant', content: '', toolCalls: [{ name: 'cd', arguments: CD }] },
  { role: 'tool', content: '{"current_working_directory": "documents"}', toolCallId: 'a' },
  { role: 'assistant', content: '', toolCalls: [{ name: 'place_order', arguments: ORDER }] },
  { role: 'tool', content: 'Order 12446: "Pending"\n\tline two\\', toolCallId: 'b' },
  { role: 'assistant', content: '', toolCalls: [{ name: 'book_flight', arguments: FLIGHT }] },
  { role: 'tool', content: '{"booking_id": "3426812"}', toolCallId: 'c' },
  { role: 'assistant', content: 'Done: booked 3426812, and the order is pending.' },
  { role: 'user', content: 'Thanks!' },
  { role: 'assistant', content: 'You are welcome.' },
];

describe('llama3 with tools, against Llama 3.1 Hugging Face template', () => {
  const declared = family.toolDeclaration(goldens.tools, goldens.system);
  const messages = [...declared, ...CONVERSATION];
  // what the template is given: the plain system prompt, the tools apart
  const hfMessages: FamilyMessage[] = [{ role: 'system', content: goldens.system }, ...CONVERSATION];

  it('declares the tools in one system message, the template tools_in_user_message=false form', () => {
    expect(declared).toHaveLength(1);
    expect(declared[0]!.role).toBe('system');
    const content = declared[0]!.content;
    expect(content.startsWith('Environment: ipython\nCutting Knowledge Date: December 2023\n')).toBe(true);
    expect(content).toContain('Today Date: 26 Jul 2024\n\n');
    expect(content).toContain('{\n    "type": "function",\n    "function": {\n        "name": "cd",');
    expect(content.endsWith(`\n\n${goldens.system}`)).toBe(true);
  });

  const cuts = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  it.each(cuts)(
    'renders the prompt and the sequence up to message %i as the template does, token for token',
    (i) => {
      const prompt = family.generationPrompt(messages.slice(0, i));
      const full = family.supervised(messages.slice(0, i + 1));
      const hfPrompt = TEMPLATE
        ? hfRender(hfMessages.slice(0, i), goldens.tools, ARGUMENTS, true)
        : RENDERED[`prompt ${i}`]!;
      const hfFull = TEMPLATE
        ? hfRender(hfMessages.slice(0, i + 1), goldens.tools, ARGUMENTS, false)
        : RENDERED[`full ${i}`]!;
      expect(joined(prompt)).toBe(hfPrompt);
      expect(joined(full)).toBe(hfFull);
      expect(idsOf(enc, prompt)).toEqual(enc.encode({ text: hfPrompt }));
      expect(idsOf(enc, full)).toEqual(enc.encode({ text: hfFull }));
    },
  );

  it('writes the declaration date from the today option, as the template writes its date_string', () => {
    const dated = chatFamily('llama3', { today: '2025-03-07' });
    const user: FamilyMessage = { role: 'user', content: 'hi' };
    expect(joined(dated.generationPrompt([...dated.toolDeclaration(goldens.tools, ' '), user]))).toBe(
      TEMPLATE
        ? hfRender([{ role: 'system', content: ' ' }, user], goldens.tools, ARGUMENTS, true, '07 Mar 2025')
        : RENDERED.dated,
    );
  });

  it('declares no tools as a plain system message (the cookbook form)', () => {
    expect(family.toolDeclaration([], 'Be brief.')).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });

  it('writes a tool result as the template does: a JSON string under the ipython header', () => {
    const text = joined(family.supervised([{ role: 'tool', content: 'a "b"\né' }]));
    expect(text).toBe(
      '<|begin_of_text|><|start_header_id|>ipython<|end_header_id|>\n\n"a \\"b\\"\\né"<|eot_id|>',
    );
  });

  it('joins several calls with "; " where the template refuses them, and drops the text beside calls', () => {
    const parallel: FamilyMessage[] = [
      { role: 'user', content: 'both' },
      {
        role: 'assistant',
        content: 'Placing both.',
        toolCalls: [
          { name: 'cd', arguments: CD },
          { name: 'place_order', arguments: ORDER },
        ],
      },
    ];
    if (TEMPLATE) expect(() => hfRender(parallel, [], ARGUMENTS, false)).toThrow(TemplateError);
    expect(joined(family.supervised(parallel))).toContain(
      `<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "cd", "parameters": ${CD}}; {"name": "place_order", "parameters": ${ORDER}}<|eot_id|>`,
    );
  });
});

describe('llama3 parsing', () => {
  const ok = (toolCalls: { name: string; arguments: string }[]) => ({
    content: '',
    reasoning: null,
    toolCalls,
    unparsed: [],
    ok: true,
  });

  it('reads back the calls it renders, arguments as written', () => {
    const cases: FamilyMessage[][] = [
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [{ name: 'cd', arguments: CD }] },
      ],
      [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { name: 'place_order', arguments: ORDER },
            { name: 'book_flight', arguments: FLIGHT },
            { name: 'logout', arguments: '{}' },
          ],
        },
      ],
    ];
    for (const messages of cases) {
      const prompt = joined(family.generationPrompt(messages.slice(0, -1)));
      const full = joined(family.supervised(messages));
      expect(full.startsWith(prompt)).toBe(true);
      const parsed = family.parse(full.slice(prompt.length));
      expect(parsed).toEqual(
        ok(messages[1]!.toolCalls!.map((c) => ({ name: c.name, arguments: c.arguments }))),
      );
    }
  });

  it('reads calls separated by newlines, after <|python_tag|>, named "arguments", or ended by <|eom_id|>', () => {
    expect(
      family.parse(`{"name": "cd", "parameters": ${CD}}\n{"name": "logout", "parameters": {}}<|eot_id|>`),
    ).toEqual(
      ok([
        { name: 'cd', arguments: CD },
        { name: 'logout', arguments: '{}' },
      ]),
    );
    expect(family.parse(`<|python_tag|>{"name": "cd", "parameters": ${CD}}<|eom_id|>`)).toEqual(
      ok([{ name: 'cd', arguments: CD }]),
    );
    expect(family.parse(' {"name":"cd","arguments":{ "folder" : 30.0 }} <|eot_id|>')).toEqual(
      ok([{ name: 'cd', arguments: '{ "folder" : 30.0 }' }]),
    );
  });

  it('keeps text and JSON answers that are not calls as content', () => {
    expect(family.parse('Paris.<|eot_id|>')).toEqual({
      content: 'Paris.',
      reasoning: null,
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
    for (const answer of [
      '{"capital": "Paris"}',
      '{"city": {"name": "Paris"}}',
      '{not json',
      '[{"name": "f"}]',
    ]) {
      const parsed = family.parse(`${answer}<|eot_id|>`);
      expect(parsed.content).toBe(answer);
      expect(parsed.toolCalls).toEqual([]);
      expect(parsed.ok).toBe(true);
    }
  });

  it('reports malformed calls as unparsed, never throwing', () => {
    const malformed = [
      '{"name": "cd", "parameters": {"folder": "x"}',
      '{"name": "cd", "parameters": {"folder": }}',
      '{"name": "cd", "parameters": [1]}',
      '{"name": "logout"}',
      '{"name": "cd", "parameters": {}} and then some text',
      `{"name": "cd", "parameters": ${CD}}; {"folder": "x"}`,
      '<|python_tag|>cd(folder="x")',
      '{"name": "cd", "parameters": "{\\"folder\\": 1}"}',
    ];
    for (const body of malformed) {
      const parsed = family.parse(`${body}<|eot_id|>`);
      expect(parsed.ok, body).toBe(false);
      expect(parsed.unparsed, body).toHaveLength(1);
      expect(parsed.toolCalls, body).toEqual([]);
      expect(parsed.unparsed[0]!.error, body).not.toBe('');
    }
  });

  it('calls a completion cut off before <|eot_id|>, or going past it, not ok', () => {
    const cut = family.parse(`{"name": "cd", "parameters": ${CD}}`);
    expect(cut.ok).toBe(false);
    expect(cut.toolCalls).toEqual([]);
    expect(family.parse('Par').ok).toBe(false);
    expect(family.parse('a<|eot_id|>b<|eot_id|>').ok).toBe(false);
  });

  it('refuses a reasoning part, as the cookbook does', () => {
    expect(() =>
      family.generationPrompt([
        { role: 'assistant', content: 'x', thinking: 'hmm' },
        { role: 'user', content: 'y' },
      ]),
    ).toThrow(RenderRefused);
  });
});
