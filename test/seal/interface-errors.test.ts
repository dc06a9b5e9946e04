// @module-tag bfcl-data
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClassName } from '../../src/envs/bfcl/apis/api.js';
import type { FunctionDoc } from '../../src/envs/bfcl/data/tasks.js';
import { BfclEpisode } from '../../src/envs/bfcl/episode.js';
import { ERROR_PREFIX } from '../../src/envs/bfcl/executor.js';
import {
  classifyToolResult,
  decorateToolResult,
  EXECUTION_ERROR_PREFIX,
  evolve,
  HINT_PREFIX,
  type InterfaceState,
  initialInterfaceState,
  isFailedToolResult,
  TOOL_ERROR_CLASSES,
  type ToolErrorClass,
  toolErrorMessage,
  toolResultHint,
  trainingContext,
} from '../../src/seal/interface.js';
import type { Label } from '../../src/seal/labels.js';
import type { LabelStats, ProfileSnapshot, ProfileView } from '../../src/seal/profile.js';
import { ArgumentChecker } from '../../src/seal/schema.js';
import { type ErrorCase, readJsonl, sharedData } from '../support/golden.js';

const data = sharedData();
const ctx = trainingContext('test');

function profile(labels: Partial<Record<Label, number>>): ProfileSnapshot {
  const table: Partial<Record<Label, LabelStats>> = {};
  for (const [l, count] of Object.entries(labels) as [Label, number][])
    table[l] = { count, prevalence: count / 100, meanReward: 0, rollouts: count };
  const view: ProfileView = {
    overall: { turns: 100, rollouts: 25, meanReward: 0, labels: table },
    byCategory: {},
    byPosition: {},
    lastDominantByTask: {},
  };
  return { version: 1, window: view, total: view };
}

/** Error hints (recovery_failure) and format help (invalid_tool_call) both on. */
const hints: InterfaceState = evolve(
  initialInterfaceState(),
  profile({ recovery_failure: 20, invalid_tool_call: 20 }),
);

/** Real results: run each call in a fresh episode of a task that involves its class. */
interface Real {
  readonly call: string;
  readonly result: string;
  readonly functions: readonly FunctionDoc[];
}
function run(cls: ClassName, call: string, before: readonly string[] = []): Real {
  const task = data.tasks.find((t) => t.involvedClasses.includes(cls) && !t.missedFunction)!;
  const ep = new BfclEpisode(task, data);
  for (const c of before) ep.act([c]);
  const result = ep.act([call]).results[0]!;
  return { call, result, functions: ep.observe().functions };
}

const real: Record<string, Real> = {};
beforeAll(() => {
  real.notFound = run('GorillaFileSystem', "cd(folder='nope')");
  real.missing = run('GorillaFileSystem', 'cd()');
  real.unknown = run('GorillaFileSystem', 'frobnicate()');
  real.unexpected = run('GorillaFileSystem', 'cd(foo=1)');
  real.twice = run('GorillaFileSystem', "cd('a', folder='b')");
  real.wrongType = run('GorillaFileSystem', 'cd(folder=5)');
  real.nullName = run('GorillaFileSystem', 'ls(a=null)');
  real.syntax = run('GorillaFileSystem', 'ls(a=True');
  real.auth = run('TwitterAPI', "post_tweet(content='hi')");
  real.authList = run('TicketAPI', 'get_user_tickets()');
  real.invalid = run('VehicleControlAPI', "setHeadlights(mode='bright')");
  real.dateFormat = run('TradingBot', "get_transaction_history(start_date='2024/09/01')");
  real.generic = run('MathAPI', 'divide(a=1, b=0)');
  real.ok = run('GorillaFileSystem', 'ls()');
});

function hintFor(r: Real, state: InterfaceState = hints): string | undefined {
  return toolResultHint(ctx, state, r.result, { call: r.call, functions: r.functions });
}

describe('failed tool results', () => {
  it('uses the executor prefix', () => {
    expect(EXECUTION_ERROR_PREFIX).toBe(ERROR_PREFIX);
  });

  it('recognises execution errors, JSON error objects and the repr forms, and nothing else', () => {
    expect(toolErrorMessage(real.missing!.result)).toMatch(/^GorillaFileSystem.cd\(\) missing 1 required/);
    expect(toolErrorMessage(real.notFound!.result)).toBe("cd: 'nope': No such file or directory");
    expect(toolErrorMessage(real.authList!.result)).toBe(
      'User not authenticated. Please log in to view tickets.',
    );
    expect(toolErrorMessage("['Error: User not authenticated. Please log in to view the watchlist.']")).toBe(
      'User not authenticated. Please log in to view the watchlist.',
    );
    expect(toolErrorMessage('{"booking_status": false, "error": "Invalid access token"}')).toBe(
      'Invalid access token',
    );
    expect(toolErrorMessage('{"error": 404}')).toBe('404');
    expect(
      toolErrorMessage(
        '{"verification_status": false, "verification_failure": "Passport must be issued by the United States."}',
      ),
    ).toBe('Passport must be issued by the United States.');
    // successes, including ones whose content mentions errors
    for (const ok of [
      real.ok!.result,
      '{"file_content": "Error: Something went wrong. Final line."}',
      '{"matching_lines": ["error here"]}',
      "[{'id': 0, 'title': 'x'}]",
      'None',
      '{"result": 0.5}',
    ])
      expect(isFailedToolResult(ok), ok).toBe(false);
  });

  it('passes successful results through unchanged', () => {
    expect(
      decorateToolResult(ctx, hints, real.ok!.result, { call: 'ls()', functions: real.ok!.functions }),
    ).toBe(real.ok!.result);
  });
});

describe('one repair hint per error class, from real error texts', () => {
  const cases: readonly [string, ToolErrorClass, RegExp][] = [
    ['missing', 'missing_argument', /^cd requires folder; call it again with every required argument\.$/],
    ['unexpected', 'unexpected_argument', /^'foo' is not accepted; cd takes only folder, each given once/],
    ['twice', 'unexpected_argument', /^an argument is not accepted or is given twice; cd takes only folder/],
    ['wrongType', 'wrong_type', /wrong type or format; cd expects folder \(string\)/],
    ['dateFormat', 'wrong_type', /get_transaction_history expects start_date \(string\)/],
    ['notFound', 'not_found', /does not exist here; check the current state first/],
    ['auth', 'auth_required', /log in first \(authenticate_twitter\), then retry/],
    ['authList', 'auth_required', /log in first \(ticket_login\)/],
    ['invalid', 'invalid_value', /use one of the allowed values \(.*mode: "on" \| "off" \| "auto"/],
    [
      'unknown',
      'unknown_tool',
      /^'frobnicate' is not an available tool; call only these tools, by their bare names: .*\bcat, cd, cp\b/,
    ],
    ['nullName', 'syntax', /literal values only \(quoted strings, numbers, lists, True, False, None\)/],
    ['syntax', 'syntax', /write it as tool_name\(parameter=value\)/],
    ['generic', 'generic', /^the tool reported an error; read the message, fix its cause/],
  ];
  for (const [key, cls, hint] of cases)
    it(`${key}: ${cls}`, () => {
      const r = real[key]!;
      expect(isFailedToolResult(r.result), r.result).toBe(true);
      expect(classifyToolResult(r.result, { call: r.call })?.errorClass).toBe(cls);
      expect(hintFor(r)).toMatch(hint);
      const shown = decorateToolResult(ctx, hints, r.result, { call: r.call, functions: r.functions });
      expect(shown.startsWith(r.result)).toBe(true);
      expect(shown.slice(r.result.length)).toBe(`${HINT_PREFIX}${hintFor(r)}`);
      expect(shown.slice(r.result.length).split('\n')).toHaveLength(2); // one line
    });

  it('covers every class', () => {
    expect(new Set(cases.map((c) => c[1]))).toEqual(new Set(TOOL_ERROR_CLASSES));
  });

  it('hints without a schema when the tool is unknown to the caller', () => {
    expect(toolResultHint(ctx, hints, real.missing!.result)).toBe(
      'required argument missing (folder); call the tool again with every required argument.',
    );
    expect(toolResultHint(ctx, hints, real.unknown!.result)).toMatch(
      /call only tools from the provided list/,
    );
  });

  it('classifies every golden error case without throwing, and sorts their texts sensibly', () => {
    const counts = new Map<ToolErrorClass, number>();
    for (const c of readJsonl<ErrorCase>('error_cases.jsonl')) {
      const f = classifyToolResult(c.result, { call: c.call });
      if (f) counts.set(f.errorClass, (counts.get(f.errorClass) ?? 0) + 1);
    }
    for (const cls of TOOL_ERROR_CLASSES) expect(counts.get(cls) ?? 0, cls).toBeGreaterThan(0);
  });
});

describe('argument issues', () => {
  const checker = new ArgumentChecker(new Map([...data.docs].map(([n, d]) => [n, d.doc])));

  it('win over the error text, which can hide the cause', () => {
    const r = run('TwitterAPI', "retweet(tweet_id='0')", [
      "authenticate_twitter(username='x', password='y')",
    ]);
    const issues = checker.check('retweet', { tweet_id: '0' });
    expect(issues.map((i) => i.kind)).toEqual(['wrong_type']);
    const f = classifyToolResult(r.result, { call: r.call, issues });
    expect(f).toMatchObject({ errorClass: 'wrong_type', names: ['tweet_id'] });
    expect(toolResultHint(ctx, hints, r.result, { call: r.call, issues, functions: r.functions })).toMatch(
      /retweet expects tweet_id \(integer\)/,
    );
  });

  it('make a call that executed anyway a failed interaction', () => {
    const issues = checker.check('setHeadlights', { mode: 'bright', extra: 1 });
    expect(issues.map((i) => i.kind).sort()).toEqual(['unknown_argument', 'value_not_allowed']);
    const hint = toolResultHint(ctx, hints, '{"headlightStatus": "on"}', {
      name: 'setHeadlights',
      issues,
      functions: [data.docs.get('setHeadlights')!.doc],
    });
    expect(hint).toBe(
      "'extra' is not accepted; setHeadlights takes only mode, each given once, by these names.",
    );
    const missing = checker.check('cd', {});
    expect(toolResultHint(ctx, hints, 'None', { name: 'cd', issues: missing })).toMatch(
      /required argument missing \(folder\)/,
    );
  });
});

describe('which cue group a hint needs', () => {
  it('shows nothing by default: error feedback is off until evolution turns it on', () => {
    const s = initialInterfaceState();
    for (const r of Object.values(real)) expect(hintFor(r, s)).toBeUndefined();
  });

  it('recovery_failure turns on execution-error hints, invalid_tool_call the unknown-tool and syntax ones', () => {
    const recovery = evolve(initialInterfaceState(), profile({ recovery_failure: 20 }));
    expect(hintFor(real.missing!, recovery)).toBeDefined();
    expect(hintFor(real.auth!, recovery)).toBeDefined();
    expect(hintFor(real.unknown!, recovery)).toBeUndefined();
    expect(hintFor(real.syntax!, recovery)).toBeUndefined();
    const invalid = evolve(initialInterfaceState(), profile({ invalid_tool_call: 20 }));
    expect(hintFor(real.unknown!, invalid)).toBeDefined();
    expect(hintFor(real.nullName!, invalid)).toBeDefined();
    expect(hintFor(real.missing!, invalid)).toBeUndefined();
  });

  it('shows nothing when error feedback is switched off', () => {
    const config = { components: { errorFeedback: 'off' } } as const;
    const s = evolve(
      initialInterfaceState(config),
      profile({ recovery_failure: 50, invalid_tool_call: 50 }),
      config,
    );
    for (const r of Object.values(real)) expect(hintFor(r, s)).toBeUndefined();
  });
});
