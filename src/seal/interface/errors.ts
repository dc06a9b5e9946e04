/**
 * phi_err: one short repair hint for a failed tool call, and format help for output that did not
 * parse into tool calls.
 *
 * A hint is built from three public sources only: the error text the policy is already shown,
 * the argument issues found by checking the call against the public schema, and the public
 * schema of the visible tools (parameter names, types, allowed values, tool names). It never
 * proposes a value that is not in one of those.
 *
 * The error classes were read off the executor's real error texts (the golden error cases of
 * the BFCL port): Python TypeErrors from argument binding, NameErrors for unknown names, and the
 * APIs' own `{"error": ...}` messages.
 */
import type { FunctionDoc } from '../../envs/bfcl/data/tasks.js';
import type { ArgumentIssue, ArgumentIssueKind } from '../schema.js';
import { allowedValues, typeText } from './schema-cues.js';

/** The executor's prefix for an exception raised by a call (`ERROR_PREFIX` in envs/bfcl/executor.ts). */
export const EXECUTION_ERROR_PREFIX = 'Error during execution: ';

export const TOOL_ERROR_CLASSES = [
  'missing_argument',
  'unexpected_argument',
  'wrong_type',
  'invalid_value',
  'not_found',
  'auth_required',
  'unknown_tool',
  'syntax',
  'generic',
] as const;
export type ToolErrorClass = (typeof TOOL_ERROR_CLASSES)[number];

/** What is known about the call behind a result; all optional, more gives a sharper hint. */
export interface ToolCallInfo {
  /** the call string as executed, e.g. `cd(folder='x')`; its tool name is read off it */
  readonly call?: string;
  /** the tool name, when the caller has it without a call string */
  readonly name?: string;
  /** issues found by checking the call's arguments against the public schema */
  readonly issues?: readonly ArgumentIssue[];
  /** the tools visible at this step (public schema) */
  readonly functions?: readonly FunctionDoc[];
}

export interface ToolFailure {
  readonly errorClass: ToolErrorClass;
  /** the error message as the tool gave it ('' when the failure is only a schema issue) */
  readonly message: string;
  /** argument or tool names the evidence names (from the error text or the issues) */
  readonly names: readonly string[];
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function messageOf(v: unknown): string | undefined {
  if (isRecord(v)) {
    if ('error' in v) return typeof v.error === 'string' ? v.error : JSON.stringify(v.error);
    // travel's verify_traveler_information reports failure under its own key
    for (const [k, x] of Object.entries(v)) if (k.endsWith('_failure') && typeof x === 'string') return x;
    return undefined;
  }
  if (typeof v === 'string' && v.startsWith('Error: ')) return v.slice('Error: '.length);
  if (Array.isArray(v) && v.length === 1) return messageOf(v[0]);
  return undefined;
}

/**
 * The error message of a failed tool result, or undefined when the result is not a failure.
 * Failures come as an execution error (`Error during execution: ...`), a JSON object with a
 * top-level `error` key, or, where the API returned a non-JSON value, its Python repr
 * (`[{'error': '...'}]`, `['Error: ...']`). Only the top level is read, so a file whose text
 * mentions "error" is not a failure.
 */
export function toolErrorMessage(result: string): string | undefined {
  if (result.startsWith(EXECUTION_ERROR_PREFIX)) return result.slice(EXECUTION_ERROR_PREFIX.length);
  const s = result.trim();
  if (!s.startsWith('{') && !s.startsWith('[')) return undefined;
  try {
    return messageOf(JSON.parse(s));
  } catch {
    const repr = /^\[?\{'error': (['"])(.*)\1\}\]?$/s.exec(s) ?? /^\[(['"])Error: (.*)\1\]$/s.exec(s);
    return repr ? repr[2] : undefined;
  }
}

export function isFailedToolResult(result: string): boolean {
  return toolErrorMessage(result) !== undefined;
}

const ISSUE_CLASS: Readonly<Record<ArgumentIssueKind, ToolErrorClass>> = {
  missing_required: 'missing_argument',
  unknown_argument: 'unexpected_argument',
  wrong_type: 'wrong_type',
  value_not_allowed: 'invalid_value',
  malformed: 'wrong_type',
};
const ISSUE_ORDER: readonly ArgumentIssueKind[] = [
  'missing_required',
  'unknown_argument',
  'wrong_type',
  'value_not_allowed',
  'malformed',
];

/** The tool a call string names: `cd(folder='x')` -> `cd`, `GorillaFileSystem.ls()` -> `GorillaFileSystem.ls`. */
export function calledName(call: string): string | undefined {
  return /^\s*([A-Za-z_][\w.]*)\s*\(/.exec(call)?.[1];
}

const quoted = (s: string) => [...s.matchAll(/'([^']*)'/g)].map((m) => m[1]!);

const TEXT_RULES: readonly (readonly [ToolErrorClass, RegExp])[] = [
  ['missing_argument', /missing \d+ required (?:positional|keyword-only) arguments?/],
  [
    'unexpected_argument',
    /got an unexpected keyword argument|got multiple values for argument|keyword argument repeated|takes \d+ positional arguments? but|takes from \d+ to \d+ positional/,
  ],
  [
    'auth_required',
    /not authenticated|not logged in|no user is currently logged in|log ?in to|authenticate before|invalid access token/i,
  ],
  [
    'wrong_type',
    /object has no attribute|argument of type '\w+' is not|object is not (?:iterable|subscriptable|callable)|must be (?:integers|a number|numbers)|inputs? must be (?:a )?numbers?|value must be a number|could not convert|cannot create mpf|invalid literal for|unsupported operand|can only concatenate|not supported between instances|does not match format|invalid [\w ]*format|unhashable type/i,
  ],
  [
    'syntax',
    /invalid syntax|\(<string>, line \d+\)|is not supported: tool calls are parsed|unterminated string|was never closed/,
  ],
  [
    'not_found',
    /not found|no such file|does not exist|not a directory|is a directory|unsupported path|path not allowed|no available|not registered/i,
  ],
  ['invalid_value', /invalid|must be (?:between|one of|positive)|out of range/i],
];

/**
 * Classify a tool result. Schema issues win over the error text, because the text can hide the
 * cause (`retweet(tweet_id='0')` says "Tweet with ID 0 not found" when the id has the wrong type).
 */
export function classifyToolResult(result: string, info: ToolCallInfo = {}): ToolFailure | undefined {
  const message = toolErrorMessage(result);
  const issues = info.issues ?? [];
  if (issues.length > 0) {
    const kind = ISSUE_ORDER.find((k) => issues.some((i) => i.kind === k))!;
    return {
      errorClass: ISSUE_CLASS[kind],
      message: message ?? '',
      names: issues.filter((i) => i.kind === kind).map((i) => i.argument),
    };
  }
  if (message === undefined) return undefined;
  const nameError = /^name '([^']+)' is not defined/.exec(message);
  if (nameError || /^Function call \S+ is not allowed/.test(message)) {
    const missing = nameError?.[1] ?? /^Function call (\S+)/.exec(message)![1]!;
    const head = info.name ?? (info.call ? calledName(info.call) : undefined);
    // a name inside the arguments (e.g. `null`, `true`) is a literal-syntax slip, not an unknown tool
    const isTool = head === undefined || head.split('.')[0] === missing;
    return { errorClass: isTool ? 'unknown_tool' : 'syntax', message, names: [missing] };
  }
  for (const [errorClass, re] of TEXT_RULES) {
    if (re.test(message)) {
      const names =
        errorClass === 'missing_argument'
          ? quoted(message.slice(message.indexOf(':') + 1))
          : errorClass === 'unexpected_argument' && /unexpected keyword argument/.test(message)
            ? quoted(message).slice(-1)
            : [];
      return { errorClass, message, names };
    }
  }
  return { errorClass: 'generic', message, names: [] };
}

/** Which cue group must be active for a class's hint: format slips belong to format help. */
export function hintGroup(errorClass: ToolErrorClass): 'errorHints' | 'formatHelp' {
  return errorClass === 'unknown_tool' || errorClass === 'syntax' ? 'formatHelp' : 'errorHints';
}

const list = (xs: readonly string[]) => xs.join(', ');

function authTools(functions: readonly FunctionDoc[]): string[] {
  return functions
    .map((f) => f.name)
    .filter((n) => /(^|_)(login|authenticate)(_|$)/.test(n) && !/status|logout/.test(n));
}

/** The one-line repair hint for a failure (without the leading "Hint: "). */
export function repairHint(failure: ToolFailure, info: ToolCallInfo = {}): string {
  const functions = info.functions ?? [];
  const name = info.name ?? (info.call ? calledName(info.call) : undefined);
  const doc = name === undefined ? undefined : functions.find((f) => f.name === name);
  const props = doc?.parameters.properties ?? {};
  const required = doc?.parameters.required ?? [];
  switch (failure.errorClass) {
    case 'missing_argument':
      if (doc && required.length > 0)
        return `${doc.name} requires ${list(required)}; call it again with every required argument.`;
      return failure.names.length > 0
        ? `required argument missing (${list(failure.names)}); call the tool again with every required argument.`
        : 'a required argument is missing; call the tool again with every required argument.';
    case 'unexpected_argument': {
      const bad =
        failure.names.length > 0
          ? `${list(failure.names.map((n) => `'${n}'`))} is not accepted`
          : 'an argument is not accepted or is given twice';
      return doc
        ? `${bad}; ${doc.name} takes only ${Object.keys(props).length > 0 ? list(Object.keys(props)) : 'no arguments'}, each given once, by these names.`
        : `${bad}; use only the parameter names in the tool's schema, each once.`;
    }
    case 'wrong_type': {
      const shown = failure.names.filter((n) => n in props);
      const keys = shown.length > 0 ? shown : Object.keys(props);
      return doc && keys.length > 0
        ? `an argument has the wrong type or format; ${doc.name} expects ${list(keys.map((k) => `${k} (${typeText(props[k]!)})`))}. Follow the formats in the description.`
        : 'an argument has the wrong type or format; give each argument the type and format its description asks for.';
    }
    case 'invalid_value': {
      const closed = Object.entries(props)
        .filter(([k]) => failure.names.length === 0 || failure.names.includes(k))
        .map(([k, p]) => [k, allowedValues(p)] as const)
        .filter(([, a]) => a !== undefined)
        .map(([k, a]) => `${k}: ${a!.values.map((v) => JSON.stringify(v)).join(' | ')}`);
      return closed.length > 0
        ? `a value is not accepted; use one of the allowed values (${closed.join('; ')}).`
        : 'a value is not accepted; check the allowed values or range in the tool description and the current state, then retry.';
    }
    case 'not_found':
      return 'that path or object does not exist here; check the current state first (list or look it up) and use names and ids exactly as earlier results show them.';
    case 'auth_required': {
      const tools = authTools(functions);
      return tools.length > 0
        ? `this action needs an authenticated session; log in first (${list(tools)}), then retry.`
        : 'this action needs an authenticated session; log in with the matching tool first, then retry.';
    }
    case 'unknown_tool': {
      const bad = failure.names[0];
      const names = functions.map((f) => f.name);
      return names.length > 0
        ? `'${bad}' is not an available tool; call only these tools, by their bare names: ${list(names)}.`
        : `'${bad}' is not an available tool; call only tools from the provided list, by their bare names.`;
    }
    case 'syntax':
      return 'the call could not be read; write it as tool_name(parameter=value) with literal values only (quoted strings, numbers, lists, True, False, None).';
    case 'generic':
      return 'the tool reported an error; read the message, fix its cause (an argument, a missing earlier step, or the order of calls) and retry, or tell the user why it cannot be done.';
  }
}

export interface ParseFailure {
  /** how a call is written in the policy's format, placeholders only (agent/format.ts CALL_SKELETONS) */
  readonly skeleton: string;
  /** the tools visible at this step */
  readonly toolNames: readonly string[];
  /** the parser's message about the policy's own output */
  readonly error?: string;
}

/** The help text for output that did not parse into tool calls. */
export function formatHelpText(failure: ParseFailure): string {
  const why = failure.error ? ` (${failure.error.replace(/\s+/g, ' ').trim().slice(0, 200)})` : '';
  return [
    `Your last message could not be read as tool calls${why}.`,
    failure.skeleton,
    failure.toolNames.length > 0 ? `Available tools: ${list(failure.toolNames)}.` : 'No tools are available.',
    'If none of these tools fits the request, answer in plain text without any tool call.',
  ].join('\n');
}
