import { describe, expect, it } from 'vitest';
import { type FamilyMessage, RenderRefused } from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { describeGoldens } from './check.js';
import { joined, loadGoldens } from './goldens.js';

describeGoldens('deepseekv3');
describeGoldens('deepseekv3_thinking');

const EOS = '<｜end▁of▁sentence｜>';
const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';
const call = (name: string, args: string) => `${CALL_BEGIN}${name}${SEP}${args}${CALL_END}`;

const goldens = loadGoldens();
const ORDER = '{"order_type": "Buy", "symbol": "AAPL", "price": 30.0, "amount": 1e21}';
const FLIGHT = '{"access_token": "abc123", "passengers": ["Zoë", "東京"], "options": {"seat": "A"}}';

describe.each(['deepseekv3', 'deepseekv3_thinking'])('%s', (name) => {
  const family = chatFamily(name);
  const thinking = name === 'deepseekv3_thinking';

  it('declares the tools with their parameters as Python json.dumps writes them (ASCII escaped)', () => {
    const [system] = family.toolDeclaration(
      [
        {
          name: 'f',
          description: 'Zoë',
          parameters: { type: 'object', properties: { x: { enum: ['é', 1, 0.5] } } },
        },
      ],
      'sys',
    );
    expect(system!.content).toContain(
      '### f\nDescription: Zoë\n\nParameters: {"type": "object", "properties": {"x": {"enum": ["\\u00e9", 1, 0.5]}}}',
    );
    expect(system!.content.startsWith('sys\n\n## Tools\n')).toBe(true);
    expect(family.toolDeclaration([], 'sys')).toEqual([{ role: 'system', content: 'sys' }]);
  });

  it('reads back the calls it renders, arguments as written', () => {
    const messages: FamilyMessage[] = [
      ...family.toolDeclaration(goldens.tools, goldens.system),
      { role: 'user', content: 'Buy, then book.' },
      {
        role: 'assistant',
        content: 'Doing both.',
        ...(thinking ? { thinking: 'Two calls.' } : {}),
        toolCalls: [
          { name: 'place_order', arguments: ORDER },
          { name: 'book_flight', arguments: FLIGHT },
          { name: 'logout', arguments: '{}' },
        ],
      },
    ];
    const prompt = joined(family.generationPrompt(messages.slice(0, -1)));
    const full = joined(family.supervised(messages));
    expect(full.startsWith(prompt)).toBe(true);
    const parsed = family.parse(full.slice(prompt.length));
    expect(parsed).toEqual({
      content: 'Doing both.',
      reasoning: thinking ? 'Two calls.' : null,
      toolCalls: messages[messages.length - 1]!.toolCalls!.map((c) => ({
        name: c.name,
        arguments: c.arguments,
      })),
      unparsed: [],
      ok: true,
    });
  });

  it('reports malformed calls as unparsed, never throwing, keeping the calls that did parse', () => {
    const good = call('cd', '{"folder": "x"}');
    const malformed: [string, number][] = [
      [`${CALLS_BEGIN}${good}${call('f', '{bad')}${CALLS_END}`, 1],
      [`${CALLS_BEGIN}${good}${call('f', '[1, 2]')}${CALLS_END}`, 1],
      [`${CALLS_BEGIN}${good}${CALL_BEGIN}f${SEP}{}${CALLS_END}`, 1],
      [`${CALLS_BEGIN}${good}`, 0],
      [`${CALLS_BEGIN}${good}${CALL_BEGIN}${SEP}{}${CALL_END}${CALLS_END}`, 1],
      [`${CALLS_BEGIN}${good}${call('my-tool', '{}')}${CALLS_END}`, 1],
      [`${CALLS_BEGIN}${good}${CALLS_END}${CALLS_BEGIN}${good}${CALLS_END}`, 1],
    ];
    for (const [body, parsedCalls] of malformed) {
      const parsed = family.parse(`${body}${EOS}`);
      expect(parsed.ok, body).toBe(false);
      expect(parsed.unparsed.length, body).toBeGreaterThan(0);
      expect(parsed.toolCalls.length, body).toBe(parsedCalls);
      for (const u of parsed.unparsed) expect(u.raw && u.error, body).toBeTruthy();
    }
  });

  it('calls a completion cut off before the end of sentence, or going past it, not ok', () => {
    const cut = family.parse(`Calling.${CALLS_BEGIN}${call('cd', '{}')}${CALLS_END}`);
    expect(cut.ok).toBe(false);
    expect(cut.toolCalls).toEqual([]);
    expect(family.parse(`a${EOS}b${EOS}`)).toMatchObject({ content: 'a', ok: false });
  });

  it('ends a message with empty text without end of sentence, even with calls, as the cookbook does', () => {
    const full = joined(
      family.supervised([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [{ name: 'cd', arguments: '{}' }] },
      ]),
    );
    expect(full.endsWith(`${CALLS_BEGIN}${call('cd', '{}')}${CALLS_END}`)).toBe(true);
  });

  it('takes a system message only first', () => {
    expect(() =>
      family.supervised([
        { role: 'user', content: 'q' },
        { role: 'system', content: 's' },
      ]),
    ).toThrow(RenderRefused);
  });

  it('continues the turn after a tool result: no role token, no thinking prefill', () => {
    const prompt = joined(
      family.generationPrompt([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'c', toolCalls: [{ name: 'cd', arguments: '{}' }] },
        { role: 'tool', content: 'ok' },
      ]),
    );
    expect(prompt.endsWith('<｜tool▁output▁begin｜>ok<｜tool▁output▁end｜>')).toBe(true);
  });
});

describe('deepseekv3_thinking reasoning', () => {
  const family = chatFamily('deepseekv3_thinking');
  const history: FamilyMessage[] = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'ans1', thinking: 'r1' },
    { role: 'user', content: 'b' },
    { role: 'assistant', content: 'ans2', thinking: 'r2' },
  ];

  it('drops history reasoning, keeps the trained one, and prefills <think>', () => {
    expect(joined(family.supervised(history))).toBe(
      '<｜begin▁of▁sentence｜><｜User｜>a<｜Assistant｜></think>ans1<｜end▁of▁sentence｜>' +
        '<｜User｜>b<｜Assistant｜><think>r2</think>ans2<｜end▁of▁sentence｜>',
    );
    expect(
      joined(family.generationPrompt(history.slice(0, 3))).endsWith('<｜User｜>b<｜Assistant｜><think>'),
    ).toBe(true);
    expect(family.extension).toBe(false);
  });

  it('reads the reasoning of a completion sampled after the <think> prefill', () => {
    expect(family.parse(`r2</think>ans2${EOS}`)).toEqual({
      content: 'ans2',
      reasoning: 'r2',
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
    expect(family.parse(`</think>ans${EOS}`)).toMatchObject({ content: 'ans', reasoning: null, ok: true });
  });
});

describe('deepseekv3 (non-thinking)', () => {
  const family = chatFamily('deepseekv3');

  it('opens each assistant turn with </think> and writes no reasoning', () => {
    expect(
      joined(
        family.supervised([
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'x <think>inline</think>y' },
          { role: 'user', content: 'b' },
          { role: 'assistant', content: 'ans', thinking: 'hidden' },
        ]),
      ),
    ).toBe(
      '<｜begin▁of▁sentence｜><｜User｜>a<｜Assistant｜></think>x y<｜end▁of▁sentence｜>' +
        '<｜User｜>b<｜Assistant｜></think>ans<｜end▁of▁sentence｜>',
    );
    expect(family.extension).toBe(true);
  });
});
