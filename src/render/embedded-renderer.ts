/**
 * The embedded policy's prompt format as a Renderer: `<|role|>content<|end|>` per message and
 * `<|assistant|>` as the generation prompt, encoded by its own byte-level BPE (the ids the
 * embedded policy samples from, before it cuts a long chat to its context). The embedded model
 * has no native tools: its tool-call format puts the tools in the system prompt, so `tools` is not
 * rendered, as the embedded policy ignores a request's tools; nor is `enableThinking`.
 */

import { type ChatRole, encodeChat, type Tokenizer } from '../nn/tokenizer.js';
import { messageText } from '../policy/embedded/policy.js';
import type { ChatMessage } from '../policy/policy.js';
import {
  type ChatInput,
  completionTextOf,
  type Renderer,
  type Rendering,
  type RenderMessage,
} from './renderer.js';

const ROLES: ReadonlySet<string> = new Set<ChatRole>(['system', 'user', 'assistant', 'tool']);

/** a render message as the embedded policy's ChatMessage (object arguments as their JSON text) */
function chatMessage(m: RenderMessage, i: number): ChatMessage {
  if (!ROLES.has(m.role)) throw new Error(`messages[${i}]: the embedded format has no role "${m.role}"`);
  const content = m.content ?? '';
  if (m.role === 'assistant')
    return {
      role: 'assistant',
      content,
      ...(m.tool_calls
        ? {
            tool_calls: m.tool_calls.map((c, j) => ({
              id: c.id ?? `call_${j}`,
              type: 'function' as const,
              function: {
                name: c.function.name,
                arguments:
                  typeof c.function.arguments === 'string'
                    ? c.function.arguments
                    : JSON.stringify(c.function.arguments),
              },
            })),
          }
        : {}),
    };
  if (m.role === 'tool') return { role: 'tool', content, tool_call_id: m.tool_call_id ?? '' };
  return { role: m.role as 'system' | 'user', content };
}

export class EmbeddedRenderer implements Renderer {
  readonly name = 'embedded';
  readonly stopTokens: readonly number[];

  constructor(readonly tokenizer: Tokenizer) {
    this.stopTokens = [tokenizer.special('<|end|>')];
  }

  render(chat: ChatInput): Rendering {
    const messages = chat.messages.map((m, i) => messageText(chatMessage(m, i)));
    const { ids } = encodeChat(this.tokenizer, messages, chat.addGenerationPrompt ?? false);
    return { text: this.tokenizer.decode(ids), tokens: ids };
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode(ids);
  }

  completionText(ids: readonly number[]): string {
    return completionTextOf(this, ids);
  }
}
