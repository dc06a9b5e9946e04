/**
 * The lines the interface adds to the system prompt: the schema instruction line, the affordance
 * cue, and phi_cap's capability guidelines (one fixed sentence per label). They are fixed texts
 * keyed by failure type: nothing in them depends on a task, so they cannot carry a task's answer.
 */
import type { Label } from '../labels.js';

export const INSTRUCTION_LINE =
  'Give every required parameter when you call a tool, and never invent a tool that is not in the list of available tools.';

export const AFFORDANCE_LINE =
  'When a listed tool can do what the user asks, call it rather than answering in text, and make all the calls the request needs.';

export const GUIDELINE_TEXT: Readonly<Partial<Record<Label, string>>> = {
  spurious_tool_call:
    'Be cautious about calling a tool when none fits: if no listed tool can do what is asked, or a value you need was never given, say so or ask instead of calling a tool.',
  missing_tool_call:
    'When a listed tool fits the request, do call it; do not only describe or promise the action in text.',
  state_mismatch:
    'Before changing state, re-read the most recent tool results and act on the state they show, not on an assumed one.',
  recovery_failure:
    'When a tool returns an error, read it, fix the cause (arguments, a missing earlier step) and retry; re-read recent results before changing state again.',
  instance_mismatch:
    'Only act on objects (files, ids, users, orders) that the user named or that earlier tool results showed.',
  response_mismatch:
    'Match the answer format the user asked for, and base the answer on what the tools returned.',
  invalid_tool_call:
    'Write tool calls exactly in the required format, and only with tool names from the list.',
  argument_mismatch:
    'Use only parameter names from the tool schema, give every required one, and use values of the stated type from the allowed set.',
};

export const PROMPT_HEADER = 'Notes on using the tools:';
