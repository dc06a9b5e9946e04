/**
 * The contract of a tool-call format: how tools are presented to a policy, how its output is
 * decoded into call strings (parsed, never evaluated), and how the exchange goes back into the
 * chat history. Implementations: formats/native.ts (API `tools` / `tool_calls`),
 * formats/hermes.ts (`<tool_call>{...}</tool_call>` in text, Qwen style), formats/python.ts
 * (BFCL prompting style `[func(arg=value), ...]`), formats/compact.ts (the same calls, tools as
 * one-line signatures, for small contexts).
 */
import type { OpenAiTool } from '../envs/tools.js';
import type { ChatMessage, Completion } from '../policy/policy.js';
import type { SchemaShown } from '../seal/interface.js';

/** What the policy's output decoded to in one step: calls as Python call strings, a text answer, or why it did not decode. */
export type DecodedStep =
  | { readonly kind: 'calls'; readonly calls: readonly string[] }
  | { readonly kind: 'text' }
  | { readonly kind: 'parse_error'; readonly error: string };

export const TOOL_CALL_FORMATS = ['native', 'hermes', 'python', 'compact'] as const;
export type ToolCallFormat = (typeof TOOL_CALL_FORMATS)[number];

/**
 * How a call is written in each format, for the interface's format help after output that did not
 * parse. Placeholders only: a skeleton must not suggest which tool or value to use.
 */
export const CALL_SKELETONS: Readonly<Record<ToolCallFormat, string>> = {
  native:
    'Use the function-calling interface (a tool call with the tool name and a JSON object of arguments), ' +
    'not calls written in the message text. Each call has this shape:\n' +
    '{"name": "<tool_name>", "arguments": {"<parameter>": <value>, "<other_parameter>": <value>}}',
  hermes:
    'Write one <tool_call> block per call, each holding a JSON object with the tool name and its arguments:\n' +
    '<tool_call>\n{"name": "<tool_name>", "arguments": {"<parameter>": <value>, "<other_parameter>": <value>}}\n</tool_call>',
  python:
    'Write the calls as one Python list with keyword arguments and literal values ' +
    '(quoted strings, numbers, lists, True, False, None):\n' +
    '[<tool_name>(<parameter>=<value>, <other_parameter>=<value>), <other_tool_name>()]',
  compact:
    'Reply with only a Python list of calls with literal values:\n' +
    '[<tool_name>(<parameter>=<value>, <other_parameter>=<value>), <other_tool_name>()]',
};

export interface FormatAdapter {
  readonly format: ToolCallFormat;
  /** the schema facts this format's tool rendering states already, which the interface's cues leave out */
  readonly schemaShown?: SchemaShown;
  /**
   * The system prompt every method shares for this format: the task framing and, for the text
   * formats, the tool schemas rendered in it. `tools` are what the policy may call this turn;
   * `framing` replaces the BFCL framing for a suite that brings its own (τ²: its policy).
   */
  systemPrompt(tools: readonly OpenAiTool[], framing?: string): string;
  /** what goes in the request's `tools` field (native only) */
  requestTools(tools: readonly OpenAiTool[]): readonly OpenAiTool[] | undefined;
  /** the user message that reveals tools held out so far (BFCL's miss_func turn): the tools, then the message */
  addedFunctionsMessage(added: readonly OpenAiTool[], fixedText: string): string;
  /** a completion -> call strings, a text answer, or a parse error (with the reason) */
  decode(completion: Completion): DecodedStep;
  /** the assistant message to append to the history for this completion */
  assistantMessage(completion: Completion): ChatMessage;
  /** the messages carrying tool results back (one per call, in order) */
  toolResultMessages(completion: Completion, decoded: DecodedStep, results: readonly string[]): ChatMessage[];
  /** the message telling the policy its output did not parse (the environment's answer) */
  parseErrorMessage(completion: Completion, error: string): ChatMessage[];
}
