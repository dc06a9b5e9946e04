import { describe, expect, it } from 'vitest';
import type { OpenAiTool } from '../../src/envs/tools.js';
import { dropOrder, fitInterface, withoutParts } from '../../src/seal/interface/budget.js';
import {
  AFFORDANCE_LINE,
  decorateSystemPrompt,
  decorateTools,
  GUIDELINE_TEXT,
  type InterfaceState,
  initialInterfaceState,
  REQUIRED_MARK,
  trainingContext,
} from '../../src/seal/interface.js';

const guideline = (label: 'state_mismatch' | 'spurious_tool_call', pressure: number) => ({
  label,
  pressure,
  prevalence: pressure,
  meanReward: 0,
  count: 10,
  activatedRound: 1,
});

/** every schema cue and prompt line on, two guidelines (state_mismatch has the higher pressure) */
const full: InterfaceState = {
  ...initialInterfaceState({ components: { schemaCues: 'on' } }),
  guidelines: [guideline('state_mismatch', 0.3), guideline('spurious_tool_call', 0.1)],
};

const tool: OpenAiTool = {
  type: 'function',
  function: {
    name: 'cd',
    description: 'Change the current directory.',
    parameters: {
      type: 'object',
      properties: { folder: { type: 'string', description: 'Target folder.', enum: ['docs', 'src'] } },
      required: ['folder'],
    },
  },
};

describe('the interface fitted to a prompt budget', () => {
  it('drops guidelines lowest pressure first, then the prompt lines, types, allowed values, required marks', () => {
    expect(dropOrder(full)).toEqual([
      'guideline:spurious_tool_call',
      'guideline:state_mismatch',
      'affordance',
      'instruction',
      'types',
      'allowedValues',
      'requiredMarks',
    ]);
    // a cue the format's tool rendering states already is not a part to drop
    expect(dropOrder(full, { requiredMarks: true, types: true })).toEqual([
      'guideline:spurious_tool_call',
      'guideline:state_mismatch',
      'affordance',
      'instruction',
      'allowedValues',
    ]);
    expect(dropOrder(initialInterfaceState({ components: { schemaCues: 'off' } }))).toEqual([]);
  });

  it('worked example: a 100-token environment prompt and 10 tokens per interface part', () => {
    const cost = (s: InterfaceState) => 100 + 10 * dropOrder(s).length;
    const at = (budget: number) => fitInterface(full, (s) => cost(s) <= budget);
    expect(at(170)).toMatchObject({ dropped: [], fits: true });
    expect(at(169).dropped).toEqual(['guideline:spurious_tool_call']);
    expect(at(160).dropped).toEqual(['guideline:spurious_tool_call']);
    expect(at(140).dropped).toEqual([
      'guideline:spurious_tool_call',
      'guideline:state_mismatch',
      'affordance',
    ]);
    expect(at(110).state.cues.requiredMarks.active).toBe(true);
    expect(at(110).state.cues.allowedValues.active).toBe(false);
    expect(at(100)).toMatchObject({ fits: true });
    expect(at(100).dropped).toHaveLength(7);
    // not even the environment's own prompt fits: everything is dropped, and the policy cuts the
    // prompt exactly as it would without the interface
    expect(at(99)).toMatchObject({ fits: false });
    expect(dropOrder(at(99).state)).toEqual([]);
  });

  it('on the rendered prompt: the smallest reduction that fits, and nothing changed that was not dropped', () => {
    const ctx = trainingContext();
    const render = (s: InterfaceState) =>
      decorateSystemPrompt(ctx, s, JSON.stringify(decorateTools(ctx, s, [tool])));
    const plain = JSON.stringify([tool]);
    const whole = render(full);
    expect(fitInterface(full, (s) => render(s).length <= whole.length).dropped).toEqual([]);

    const oneLess = fitInterface(full, (s) => render(s).length < whole.length);
    expect(oneLess.dropped).toEqual(['guideline:spurious_tool_call']);
    const text = render(oneLess.state);
    expect(text).not.toContain(GUIDELINE_TEXT.spurious_tool_call);
    expect(text).toContain(GUIDELINE_TEXT.state_mismatch);
    expect(text).toContain(AFFORDANCE_LINE);
    expect(text).toContain('Allowed values:');
    expect(text).toContain(REQUIRED_MARK);

    const none = fitInterface(full, (s) => render(s).length <= plain.length);
    expect(none).toMatchObject({ fits: true });
    expect(render(none.state)).toBe(plain);
  });

  it('leaves the given state alone and says what is left in the summary', () => {
    const before = JSON.stringify(full);
    const less = withoutParts(full, ['guideline:state_mismatch', 'types']);
    expect(JSON.stringify(full)).toBe(before);
    expect(less.guidelines.map((g) => g.label)).toEqual(['spurious_tool_call']);
    expect(less.cues.types.active).toBe(false);
    expect(less.summary).not.toContain('types');
    expect(less.summary).not.toContain('state_mismatch');
    expect(withoutParts(full, [])).toBe(full);
  });
});
