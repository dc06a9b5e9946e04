// @module-tag bfcl-data
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CALL_SKELETONS } from '../../src/agent/format.js';
import { compactFormat } from '../../src/agent/formats/compact.js';
import { formatAdapter } from '../../src/agent/formats/index.js';
import type { FunctionDoc } from '../../src/envs/bfcl/data/tasks.js';
import { BfclEpisode } from '../../src/envs/bfcl/episode.js';
import { toOpenAiTool } from '../../src/envs/bfcl/tools.js';
import {
  AFFORDANCE_LINE,
  applyObservation,
  CUE_GROUPS,
  DEFAULT_ACTIVATION,
  decorateFunctions,
  decorateSystemPrompt,
  decorateToolResult,
  decorateTools,
  type EvaluationContext,
  evaluationContext,
  evolve,
  GUIDELINE_LABELS,
  GUIDELINE_TEXT,
  INSTRUCTION_LINE,
  type InterfaceConfig,
  InterfaceConfigError,
  type InterfaceState,
  InterfaceStateError,
  InterfaceUnavailableError,
  initialInterfaceState,
  parseFailureHelp,
  parseInterfaceState,
  REQUIRED_MARK,
  resolveInterfaceConfig,
  systemPromptLines,
  type TrainingContext,
  toolResultHint,
  trainingContext,
} from '../../src/seal/interface.js';
import { LABELS, type Label } from '../../src/seal/labels.js';
import type { LabelStats, ProfileScope, ProfileSnapshot, ProfileView } from '../../src/seal/profile.js';
import { sharedData } from '../support/golden.js';

const data = sharedData();
const ctx = trainingContext('test');
const doc = (name: string): FunctionDoc => data.docs.get(name)!.doc;

/** A profile whose window holds `turns` labelled turns; each label given as [count, meanReward]. */
function profile(labels: Partial<Record<Label, readonly [number, number]>>, turns = 100): ProfileSnapshot {
  const table: Partial<Record<Label, LabelStats>> = {};
  for (const [l, [count, meanReward]] of Object.entries(labels) as [Label, readonly [number, number]][])
    table[l] = { count, prevalence: turns === 0 ? 0 : count / turns, meanReward, rollouts: count };
  const scope: ProfileScope = { turns, rollouts: Math.ceil(turns / 4), meanReward: 0.3, labels: table };
  const view: ProfileView = { overall: scope, byCategory: {}, byPosition: {}, lastDominantByTask: {} };
  return { version: 1, window: view, total: view };
}

/** Every cue group on and every guideline label active: the most an interface can show. */
function everything(): InterfaceState {
  const all = Object.fromEntries(GUIDELINE_LABELS.map((l) => [l, [30, 0.1] as const]));
  const config: InterfaceConfig = {
    components: { schemaCues: 'on', errorFeedback: 'on' },
    maxGuidelines: GUIDELINE_LABELS.length,
  };
  return evolve(initialInterfaceState(config), profile(all), config);
}

describe('initial state and config', () => {
  it('starts with the paper always-on part only: required marks and allowed values', () => {
    const s = initialInterfaceState();
    expect(s.version).toBe(1);
    expect(s.round).toBe(0);
    expect(s.components).toEqual({ schemaCues: 'auto', errorFeedback: 'auto', guidelines: 'auto' });
    expect(CUE_GROUPS.filter((g) => s.cues[g].active)).toEqual(['requiredMarks', 'allowedValues']);
    expect(s.cues.requiredMarks).toEqual({
      active: true,
      source: 'base',
      trigger: null,
      pressure: null,
      activatedRound: 0,
    });
    expect(s.guidelines).toEqual([]);
    expect(s.summary).toBe(
      'round 0 | schemaCues: requiredMarks, allowedValues | errorFeedback: none | guidelines: none',
    );
  });

  it('config switches force components on or off', () => {
    const on = initialInterfaceState({ components: { schemaCues: 'on', errorFeedback: 'on' } });
    expect(CUE_GROUPS.every((g) => on.cues[g].active && on.cues[g].source !== null)).toBe(true);
    expect(on.cues.types.source).toBe('forced');
    const off = initialInterfaceState({ components: { schemaCues: 'off', guidelines: 'off' } });
    expect(CUE_GROUPS.some((g) => off.cues[g].active)).toBe(false);
    expect(off.summary).toContain('schemaCues: off');
    expect(off.summary).toContain('guidelines: off');
    const custom = initialInterfaceState({ alwaysOn: ['requiredMarks'] });
    expect(CUE_GROUPS.filter((g) => custom.cues[g].active)).toEqual(['requiredMarks']);
  });

  it('rejects bad config with a message that names the field', () => {
    expect(() => resolveInterfaceConfig({ activation: { minPrevalence: 2 } })).toThrow(
      /activation.minPrevalence/,
    );
    expect(() => resolveInterfaceConfig({ maxGuidelines: -1 })).toThrow(InterfaceConfigError);
    expect(() => resolveInterfaceConfig({ alwaysOn: ['bogus' as never] })).toThrow(
      /unknown cue group 'bogus'/,
    );
    expect(() => resolveInterfaceConfig({ triggers: { types: ['nope' as never] } })).toThrow(/unknown label/);
    expect(() => resolveInterfaceConfig({ components: { guidelines: 'maybe' as never } })).toThrow(
      /guidelines/,
    );
    expect(() => resolveInterfaceConfig({ retention: { minPrevalence: 0.2 } })).toThrow(/no stricter/);
    expect(resolveInterfaceConfig().activation).toEqual({
      minPrevalence: 0.1,
      maxMeanReward: 0.6,
      minCount: 8,
    });
  });
});

describe('evolve', () => {
  it('activates cues by failure type: argument_mismatch -> schema cues, missing_tool_call -> affordance, recovery_failure -> error hints, invalid_tool_call -> format help', () => {
    const s0 = initialInterfaceState();
    const s1 = evolve(s0, profile({ argument_mismatch: [20, 0.2] }));
    expect(s1.round).toBe(1);
    expect(s1.cues.types).toMatchObject({
      active: true,
      source: 'evolved',
      trigger: 'argument_mismatch',
      activatedRound: 1,
    });
    expect(s1.cues.types.pressure).toBeCloseTo(0.2 * 0.8);
    expect(s1.cues.instruction.active).toBe(true);
    expect(s1.cues.affordance.active).toBe(false);
    expect(s1.cues.errorHints.active).toBe(false);
    expect(s1.cues.allowedValues.source).toBe('base');
    expect(s1.changes).toContain('+types (argument_mismatch, pressure 0.160)');

    const s2 = evolve(s0, profile({ missing_tool_call: [15, 0] }));
    expect(CUE_GROUPS.filter((g) => s2.cues[g].source === 'evolved')).toEqual(['affordance']);
    const s3 = evolve(s0, profile({ recovery_failure: [15, 0] }));
    expect(CUE_GROUPS.filter((g) => s3.cues[g].source === 'evolved')).toEqual(['errorHints']);
    const s4 = evolve(s0, profile({ invalid_tool_call: [15, 0] }));
    expect(CUE_GROUPS.filter((g) => s4.cues[g].source === 'evolved')).toEqual(['instruction', 'formatHelp']);
  });

  it('applies each threshold: prevalence >= 0.10, mean reward < 0.6, count >= 8 (boundaries included)', () => {
    const s0 = initialInterfaceState();
    const on = (p: ProfileSnapshot) => evolve(s0, p).guidelines.map((g) => g.label);
    expect(on(profile({ state_mismatch: [10, 0.59] }))).toEqual(['state_mismatch']);
    expect(on(profile({ state_mismatch: [9, 0] }))).toEqual([]); // prevalence 0.09
    expect(on(profile({ state_mismatch: [10, 0.6] }))).toEqual([]); // mean reward not below 0.6
    expect(on(profile({ state_mismatch: [7, 0] }, 50))).toEqual([]); // prevalence 0.14 but seen 7 times
    expect(on(profile({ state_mismatch: [8, 0] }, 80))).toEqual(['state_mismatch']);
    // thresholds are configurable
    const loose = {
      activation: { minPrevalence: 0.05, minCount: 2 },
      retention: { minPrevalence: 0.05, minCount: 2 },
    };
    expect(evolve(s0, profile({ state_mismatch: [5, 0] }), loose).guidelines).toHaveLength(1);
  });

  it('ranks guidelines by pressure = prevalence x (1 - mean reward) and keeps the top 3', () => {
    const s = evolve(
      initialInterfaceState(),
      profile({
        spurious_tool_call: [30, 0.5], // 0.15
        missing_tool_call: [20, 0], // 0.20
        state_mismatch: [40, 0.55], // 0.18
        response_mismatch: [12, 0.1], // 0.108
        pass: [90, 0.9], // never a guideline
        checker_error: [50, 0], // never a guideline
      }),
    );
    expect(s.guidelines.map((g) => g.label)).toEqual([
      'missing_tool_call',
      'state_mismatch',
      'spurious_tool_call',
    ]);
    expect(s.guidelines[0]).toEqual({
      label: 'missing_tool_call',
      pressure: 0.2,
      prevalence: 0.2,
      meanReward: 0,
      count: 20,
      activatedRound: 1,
    });
    expect(
      evolve(initialInterfaceState(), profile({ state_mismatch: [40, 0.55] }), { maxGuidelines: 0 })
        .guidelines,
    ).toEqual([]);
  });

  it('retires a guideline and its cues once the label is mastered, with hysteresis in between', () => {
    let s = evolve(initialInterfaceState(), profile({ missing_tool_call: [20, 0.2] }));
    expect(s.guidelines.map((g) => g.label)).toEqual(['missing_tool_call']);
    expect(s.cues.affordance.active).toBe(true);
    // below activation (0.07 < 0.10) but above retention (>= 0.05, reward < 0.7): stays, keeps its round
    s = evolve(s, profile({ missing_tool_call: [7, 0.65] }));
    expect(s.guidelines).toMatchObject([{ label: 'missing_tool_call', activatedRound: 1 }]);
    expect(s.cues.affordance).toMatchObject({ active: true, activatedRound: 1 });
    // the same numbers would not switch it on from scratch
    expect(evolve(initialInterfaceState(), profile({ missing_tool_call: [7, 0.65] })).guidelines).toEqual([]);
    // mastered: gone, and the change log says why
    s = evolve(s, profile({ missing_tool_call: [2, 0.9], pass: [98, 0.9] }));
    expect(s.guidelines).toEqual([]);
    expect(s.cues.affordance.active).toBe(false);
    expect(s.changes).toEqual([
      '-affordance (missing_tool_call no longer qualifies)',
      '-guideline missing_tool_call (pressure 0.002, no longer in the top)',
    ]);
    // hysteresis off: retention equal to activation
    const strict = { retention: DEFAULT_ACTIVATION };
    const t = evolve(
      evolve(initialInterfaceState(), profile({ missing_tool_call: [20, 0.2] }), strict),
      profile({ missing_tool_call: [7, 0.65] }),
      strict,
    );
    expect(t.guidelines).toEqual([]);
  });

  it('keeps the interface when a window has no labelled turns, but still honours config switches', () => {
    const s1 = evolve(initialInterfaceState(), profile({ argument_mismatch: [20, 0] }));
    const s2 = evolve(s1, profile({}, 0));
    expect(s2.round).toBe(2);
    expect(s2.cues).toEqual(s1.cues);
    expect(s2.guidelines).toEqual(s1.guidelines);
    expect(s2.changes).toEqual([]);
    const s3 = evolve(s1, profile({}, 0), { components: { guidelines: 'off' } });
    expect(s3.guidelines).toEqual([]);
    expect(s3.changes).toEqual(['-guideline argument_mismatch (switched off)']);
  });

  it('never activates anything of a component switched off', () => {
    const config: InterfaceConfig = { components: { errorFeedback: 'off', guidelines: 'off' } };
    const s = evolve(
      initialInterfaceState(config),
      profile({ recovery_failure: [50, 0], invalid_tool_call: [50, 0] }),
      config,
    );
    expect(s.cues.errorHints.active).toBe(false);
    expect(s.cues.formatHelp.active).toBe(false);
    expect(s.guidelines).toEqual([]);
    expect(s.cues.instruction.active).toBe(true); // schema cues still answer invalid_tool_call
  });

  it('reads the total instead of the window when asked', () => {
    const p = profile({});
    const withTotal: ProfileSnapshot = { ...p, total: profile({ state_mismatch: [30, 0] }).total };
    expect(evolve(initialInterfaceState(), withTotal).guidelines).toEqual([]);
    expect(evolve(initialInterfaceState(), withTotal, { profileScope: 'total' }).guidelines).toHaveLength(1);
  });

  it('round-trips through JSON after several evolve steps (and parseInterfaceState accepts it)', () => {
    const profiles = [
      profile({ argument_mismatch: [30, 0.1], missing_tool_call: [12, 0.3] }),
      profile({ recovery_failure: [25, 0.2], missing_tool_call: [6, 0.5], spurious_tool_call: [40, 0.25] }),
      profile({}, 0),
      profile({ invalid_tool_call: [11, 0], state_mismatch: [18, 1 / 3] }),
      profile({ pass: [100, 1] }),
    ];
    let s = initialInterfaceState();
    const states = [s];
    for (const p of profiles) {
      s = evolve(s, p);
      states.push(s);
    }
    for (const st of states) {
      const copy = JSON.parse(JSON.stringify(st)) as unknown;
      expect(copy).toEqual(st);
      expect(parseInterfaceState(copy)).toEqual(st);
    }
    expect(states.map((x) => x.round)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('is pure and deterministic for any profile (property test)', () => {
    const failure = fc.constantFrom(...GUIDELINE_LABELS);
    const entry = fc.tuple(
      failure,
      fc.integer({ min: 0, max: 60 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), (entries) => {
        const p = profile(Object.fromEntries(entries.map(([l, c, r]) => [l, [c, r] as const])));
        const s0 = initialInterfaceState();
        const frozen = JSON.stringify(s0);
        const a = evolve(s0, p);
        expect(JSON.stringify(s0)).toBe(frozen);
        expect(evolve(s0, p)).toEqual(a);
        expect(a.guidelines.length).toBeLessThanOrEqual(3);
        const pressures = a.guidelines.map((g) => g.pressure);
        expect([...pressures].sort((x, y) => y - x)).toEqual(pressures);
        for (const g of a.guidelines) {
          expect(g.count).toBeGreaterThanOrEqual(8);
          expect(g.prevalence).toBeGreaterThanOrEqual(0.1);
          expect(g.meanReward).toBeLessThan(0.6);
        }
        expect(JSON.parse(JSON.stringify(a))).toEqual(a);
      }),
    );
  });

  it('parseInterfaceState rejects malformed input clearly', () => {
    const s = initialInterfaceState();
    expect(() => parseInterfaceState(null)).toThrow(InterfaceStateError);
    expect(() => parseInterfaceState({ ...s, version: 2 })).toThrow(/unsupported version 2/);
    expect(() => parseInterfaceState({ ...s, round: -1 })).toThrow(/round/);
    expect(() => parseInterfaceState({ ...s, guidelines: [{ label: 'pass' }] })).toThrow(/guideline/);
    expect(() => parseInterfaceState({ ...s, cues: { ...s.cues, types: { active: 'yes' } } })).toThrow(
      /cues.types/,
    );
  });
});

describe('training-time only', () => {
  const state = everything();
  const tools = [toOpenAiTool(doc('cd'))];

  it('type level: apply functions accept only a TrainingContext', () => {
    const evalCtx: EvaluationContext = evaluationContext();
    // Only run the calls to prove the runtime half too; the directives prove the type half.
    expect(() =>
      // @ts-expect-error an evaluation context cannot apply the interface
      decorateTools(evalCtx, state, tools),
    ).toThrow(InterfaceUnavailableError);
    expect(() =>
      // @ts-expect-error a structurally similar object literal is not a TrainingContext (nominal brand)
      decorateSystemPrompt({ phase: 'training', run: 'x', open: true, close() {} }, state, ''),
    ).toThrow(InterfaceUnavailableError);
    expect(() =>
      // @ts-expect-error nothing else will do either
      toolResultHint(undefined, state, 'x'),
    ).toThrow(InterfaceUnavailableError);
  });

  it('runtime: an evaluation context cast to the training type throws a clear error from every apply function', () => {
    const forged = evaluationContext() as unknown as TrainingContext;
    const ep = new BfclEpisode(data.byId.get('multi_turn_base_0')!, data);
    const calls: (() => unknown)[] = [
      () => decorateTools(forged, state, tools),
      () => decorateFunctions(forged, state, [doc('cd')]),
      () => applyObservation(forged, state, ep.observe()),
      () => systemPromptLines(forged, state),
      () => decorateSystemPrompt(forged, state, 'sys'),
      () => toolResultHint(forged, state, 'Error during execution: boom'),
      () => decorateToolResult(forged, state, 'Error during execution: boom'),
      () => parseFailureHelp(forged, state, { skeleton: CALL_SKELETONS.python, toolNames: ['cd'] }),
    ];
    for (const call of calls) expect(call).toThrow(/cannot be applied during evaluation/);
  });

  it('runtime: a closed training context and a state of another version are refused', () => {
    const c = trainingContext('round-1');
    expect(decorateSystemPrompt(c, state, '')).not.toBe('');
    c.close();
    expect(() => decorateSystemPrompt(c, state, '')).toThrow(/training context 'round-1' is closed/);
    const bad = { ...state, version: 9 } as unknown as InterfaceState;
    expect(() => decorateTools(ctx, bad, tools)).toThrow(InterfaceStateError);
  });
});

describe('schema cues', () => {
  const s0 = initialInterfaceState();
  const types = evolve(s0, profile({ argument_mismatch: [20, 0] }));

  it('marks required parameters and lists allowed values, in the description only', () => {
    const [cd] = decorateTools(ctx, s0, [toOpenAiTool(doc('cd'))]);
    const original = doc('cd').parameters.properties.folder!.description!;
    expect(original.endsWith(' ')).toBe(true); // BFCL's trailing space is kept, not doubled
    expect(cd!.function.parameters.properties!.folder!.description).toBe(`${original}${REQUIRED_MARK}`);
    expect(cd!.function.description).toMatch(/Required arguments: folder\.$/);
    const [lights] = decorateFunctions(ctx, s0, [doc('setHeadlights')]);
    const mode = lights!.parameters.properties.mode!.description!;
    expect(mode).toBe(
      'The mode of the headlights. [Enum]: ["on", "off", "auto"] (required) Allowed values: "on", "off", "auto".',
    );
    // values stated in prose ("Options are: ...") count too; optional parameters get no mark
    const [cost] = decorateFunctions(ctx, s0, [doc('get_flight_cost')]);
    expect(cost!.parameters.properties.travel_class!.description).toMatch(
      /Options are: economy, business, first\. (\(required\) )?Allowed values: "economy", "business", "first"\.$/,
    );
    const [wc] = decorateFunctions(ctx, s0, [doc('wc')]);
    expect(wc!.parameters.properties.file_name!.description).toContain(REQUIRED_MARK);
    expect(wc!.parameters.properties.mode!.description).toBe(
      doc('wc').parameters.properties.mode!.description,
    );
  });

  it('lists allowed values per item for arrays, and reads `enum` keys too', () => {
    const [lock] = decorateFunctions(ctx, s0, [doc('lockDoors')]);
    expect(lock!.parameters.properties.door!.description).toContain(
      'Each item must be one of: "driver", "passenger", "rear_left", "rear_right".',
    );
    const custom: FunctionDoc = {
      name: 'pick',
      description: 'Pick one.',
      parameters: {
        type: 'dict',
        properties: { colour: { type: 'string', description: 'A colour.', enum: ['red', 'blue'] } },
      },
    };
    expect(decorateFunctions(ctx, s0, [custom])[0]!.parameters.properties.colour!.description).toBe(
      'A colour. Allowed values: "red", "blue".',
    );
  });

  it('shows types only once the types cue is on, and decorates nested properties', () => {
    expect(
      decorateFunctions(ctx, s0, [doc('mean')])[0]!.parameters.properties.numbers!.description,
    ).not.toContain('Type:');
    const [mean] = decorateFunctions(ctx, types, [doc('mean')]);
    expect(mean!.parameters.properties.numbers!.description).toContain('Type: array of number.');
    const [edit] = decorateTools(ctx, types, [toOpenAiTool(doc('edit_ticket'))]);
    const nested = edit!.function.parameters.properties!.updates!.properties!;
    expect(nested.priority!.description).toContain('Type: integer.');
  });

  it('never removes or renames anything: with descriptions blanked, decorated equals original', () => {
    const all = [...data.docs.values()].map((d) => d.doc);
    const strip = (x: unknown): unknown =>
      Array.isArray(x)
        ? x.map(strip)
        : x && typeof x === 'object'
          ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === 'description' ? 'D' : strip(v)]))
          : x;
    const full = everything();
    const docs = decorateFunctions(ctx, full, all);
    const tools = decorateTools(ctx, full, all.map(toOpenAiTool));
    expect(strip(docs)).toEqual(strip(all));
    expect(strip(tools)).toEqual(strip(all.map(toOpenAiTool)));
    // every description keeps the original as its prefix
    docs.forEach((d, i) => {
      expect(d.description.startsWith(all[i]!.description)).toBe(true);
      for (const [k, p] of Object.entries(d.parameters.properties))
        expect(p.description!.startsWith(all[i]!.parameters.properties[k]!.description ?? '')).toBe(true);
    });
  });

  it('leaves out the cues a format states already, and only those', () => {
    const full = everything();
    const edit = toOpenAiTool(doc('edit_ticket'));
    const [plain] = decorateTools(ctx, full, [edit]);
    const [compactShown] = decorateTools(ctx, full, [edit], compactFormat.schemaShown);
    const text = (t: unknown) => JSON.stringify(t);
    expect(text(plain)).toContain(REQUIRED_MARK);
    expect(text(plain)).toContain('Type: integer.');
    expect(text(compactShown)).not.toContain(REQUIRED_MARK);
    expect(text(compactShown)).not.toContain('Required arguments');
    expect(text(compactShown)).not.toContain('Type:');
    // a value set only a description states is not in the compact signature: its cue stays
    const [lock] = decorateTools(ctx, full, [toOpenAiTool(doc('lockDoors'))], compactFormat.schemaShown);
    expect(text(lock)).toContain('Each item must be one of: \\"driver\\"');
    // the other formats render from JSON schemas, which state neither fact in prose
    for (const f of ['python', 'hermes', 'native'] as const)
      expect(formatAdapter(f).schemaShown ?? {}).toEqual({});
  });

  it('shows nothing extra when schema cues are off, and leaves its input untouched', () => {
    const off = initialInterfaceState({ components: { schemaCues: 'off' } });
    const original = toOpenAiTool(doc('cd'));
    const frozen = JSON.stringify(original);
    expect(decorateTools(ctx, off, [original])).toEqual([original]);
    decorateTools(ctx, everything(), [original]);
    expect(JSON.stringify(original)).toBe(frozen);
  });

  it('applyObservation decorates functions, tools and revealed functions of a turn', () => {
    const task = data.byId.get('multi_turn_miss_func_0')!;
    const ep = new BfclEpisode(task, data);
    while (ep.turn < task.missedFunction!.turn) ep.nextTurn();
    const obs = ep.observe();
    const out = applyObservation(ctx, s0, obs);
    expect(out.messages).toBe(obs.messages);
    expect(out.functions.map((f) => f.name)).toEqual(obs.functions.map((f) => f.name));
    expect(out.functionsAdded!.map((f) => f.name)).toEqual(task.missedFunction!.names);
    expect(JSON.stringify(out.tools)).toContain(REQUIRED_MARK);
    expect(JSON.stringify(out.functionsAdded)).toContain(REQUIRED_MARK);
  });
});

describe('system prompt', () => {
  it('adds nothing by default', () => {
    expect(decorateSystemPrompt(ctx, initialInterfaceState(), 'You are helpful.')).toBe('You are helpful.');
  });

  it('adds the instruction line, the affordance cue and the active guidelines, in that order', () => {
    const s = evolve(
      initialInterfaceState(),
      profile({ argument_mismatch: [20, 0.1], missing_tool_call: [30, 0], spurious_tool_call: [12, 0.2] }),
    );
    expect(systemPromptLines(ctx, s)).toEqual([
      INSTRUCTION_LINE,
      AFFORDANCE_LINE,
      GUIDELINE_TEXT.missing_tool_call,
      GUIDELINE_TEXT.argument_mismatch,
      GUIDELINE_TEXT.spurious_tool_call,
    ]);
    const out = decorateSystemPrompt(ctx, s, 'You are helpful.');
    expect(out.startsWith('You are helpful.\n\nNotes on using the tools:\n- ')).toBe(true);
    expect(INSTRUCTION_LINE).toMatch(/required parameter/);
    expect(INSTRUCTION_LINE).toMatch(/never invent a tool/);
    expect(AFFORDANCE_LINE).toMatch(/call it rather than answering in text/);
  });

  it('has one guideline per failure label with the method doc meaning', () => {
    expect(Object.keys(GUIDELINE_TEXT).sort()).toEqual([...GUIDELINE_LABELS].sort());
    expect(GUIDELINE_TEXT.spurious_tool_call).toMatch(/cautious about calling a tool when none fits/);
    expect(GUIDELINE_TEXT.missing_tool_call).toMatch(/do call it/);
    expect(GUIDELINE_TEXT.state_mismatch).toMatch(/re-read the most recent tool results/);
    expect(GUIDELINE_TEXT.instance_mismatch).toMatch(/Only act on objects/);
    expect(GUIDELINE_TEXT.response_mismatch).toMatch(/answer format the user asked for/);
    for (const l of LABELS.filter((x) => !GUIDELINE_LABELS.includes(x)))
      expect(GUIDELINE_TEXT[l]).toBeUndefined();
  });

  it('shows no guidelines when the component is off, even if the state lists some', () => {
    const s = everything();
    const off: InterfaceState = { ...s, components: { ...s.components, guidelines: 'off' } };
    const lines = systemPromptLines(ctx, off);
    expect(lines).toEqual([INSTRUCTION_LINE, AFFORDANCE_LINE]);
  });
});

describe('parse-failure help', () => {
  const s = evolve(initialInterfaceState(), profile({ invalid_tool_call: [20, 0] }));
  const toolNames = ['cd', 'ls', 'mkdir'];

  it('is off until invalid_tool_call activates format help', () => {
    expect(
      parseFailureHelp(ctx, initialInterfaceState(), { skeleton: CALL_SKELETONS.python, toolNames }),
    ).toBeUndefined();
  });

  it('gives the expected format with a skeleton, the tool names and the plain-text advice, per format', () => {
    const python = parseFailureHelp(ctx, s, {
      skeleton: CALL_SKELETONS.python,
      toolNames,
      error: 'invalid syntax (<string>, line 1)',
    })!;
    expect(python).toContain(
      '[<tool_name>(<parameter>=<value>, <other_parameter>=<value>), <other_tool_name>()]',
    );
    expect(python).toContain('(invalid syntax (<string>, line 1))');
    const hermes = parseFailureHelp(ctx, s, { skeleton: CALL_SKELETONS.hermes, toolNames })!;
    expect(hermes).toContain('<tool_call>\n{"name": "<tool_name>", "arguments": {');
    expect(hermes).toContain('</tool_call>');
    const native = parseFailureHelp(ctx, s, { skeleton: CALL_SKELETONS.native, toolNames })!;
    expect(native).toContain('function-calling interface');
    expect(native).toContain('{"name": "<tool_name>", "arguments": {');
    for (const text of [python, hermes, native]) {
      expect(text).toContain('Available tools: cd, ls, mkdir.');
      expect(text).toContain(
        'If none of these tools fits the request, answer in plain text without any tool call.',
      );
    }
  });
});
