/**
 * τ²'s simulated user, as v0.2.0 builds it: a model prompted with the global simulation guidelines
 * (the tools variant when the user has tools, as in telecom) and the task's user scenario, shown
 * the conversation with the roles flipped (the agent's text as `user`, its own messages as
 * `assistant`, its own tool results as `tool`). The model itself is injected (`UserModel`): seal
 * reaches it over any OpenAI-compatible server, and tests script it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../util/errors.js';
import type { UserChatMessage } from '../suite.js';
import type { Tau2Message, UserScenario } from './types.js';

/** The user's signals: a message holding one ends the conversation. */
export const USER_STOP = '###STOP###';
export const USER_TRANSFER = '###TRANSFER###';
export const USER_OUT_OF_SCOPE = '###OUT-OF-SCOPE###';

export function isUserStop(content: string | null): boolean {
  return (
    content !== null &&
    (content.includes(USER_STOP) || content.includes(USER_TRANSFER) || content.includes(USER_OUT_OF_SCOPE))
  );
}

/** Python's textwrap.indent with its default predicate: lines that are not only whitespace get the prefix. */
function indent(text: string, prefix: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) => (line.trim() === '' ? line : prefix + line))
    .join('');
}

/** `str(UserScenario)` as the reference writes it (the text inside `<scenario>`). */
export function scenarioText(scenario: UserScenario): string {
  const lines: string[] = [];
  if (scenario.persona !== null && scenario.persona !== undefined) {
    lines.push('Persona:');
    lines.push(indent(scenario.persona, '\t'));
  }
  lines.push('Instructions:');
  const ins = scenario.instructions;
  let text: string;
  if (typeof ins === 'string') text = ins;
  else {
    const parts = [`Domain: ${ins.domain}`, `Reason for call:\n${indent(ins.reason_for_call, '\t')}`];
    if (ins.known_info !== null && ins.known_info !== undefined)
      parts.push(`Known info:\n${indent(ins.known_info, '\t')}`);
    if (ins.unknown_info !== null && ins.unknown_info !== undefined)
      parts.push(`Unknown info:\n${indent(ins.unknown_info, '\t')}`);
    parts.push(`Task instructions:\n${indent(ins.task_instructions, '\t')}`);
    text = parts.join('\n');
  }
  lines.push(indent(text, '\t'));
  return lines.join('\n');
}

/** The guideline file the reference gives the user: the tools variant when the user has tools. */
export function loadUserGuidelines(root: string, withTools: boolean): string {
  const path = join(
    root,
    'data',
    'tau2',
    'user_simulator',
    withTools ? 'simulation_guidelines_tools.md' : 'simulation_guidelines.md',
  );
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new UserError(`the τ² user guidelines are missing at ${path}; run \`seal data pull tau2\``);
  }
}

/** The user model's system prompt: the guidelines, then the scenario in a `<scenario>` block. */
export function userSystemPrompt(guidelines: string, scenario: UserScenario): string {
  // the reference strips its template before filling it, so the guidelines keep their own whitespace
  return `${guidelines}\n\n<scenario>\n${scenarioText(scenario)}\n</scenario>`;
}

/**
 * The conversation as the user model sees it: roles flipped; the agent's tool calls and the
 * results of its tools are not shown (the reference refuses them in the user's history, and
 * never puts them there).
 */
export function flipForUser(history: readonly Tau2Message[]): UserChatMessage[] {
  const out: UserChatMessage[] = [];
  for (const m of history) {
    if (m.role === 'user') {
      out.push({
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls
          ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) }
          : {}),
      });
    } else if (m.role === 'assistant') {
      if (m.tool_calls === null || m.tool_calls === undefined)
        out.push({ role: 'user', content: m.content ?? '' });
    } else if (m.role === 'tool' && m.requestor === 'user') {
      out.push({ role: 'tool', content: m.content ?? '', tool_call_id: m.id });
    }
  }
  return out;
}
