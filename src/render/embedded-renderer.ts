/**
 * The embedded policy's prompt format as a Renderer: `<|role|>content<|end|>` per message and
 * `<|assistant|>` as the generation prompt, encoded by its own byte-level BPE (the ids the
 * embedded policy samples from, before it cuts a long chat to its context). The embedded model
 * has no native tools: its tool-call format puts the tools in the system prompt, so `tools` is not
 * rendered, as the embedded policy ignores a request's tools; nor is `enableThinking`.
 */

import { type ChatRole, type ChatSource, encodeChat, messageText, type Tokenizer } from '../nn/tokenizer.js';
import {
  type ChatInput,
  completionTextOf,
  type Renderer,
  type Rendering,
  type RenderMessage,
} from './renderer.js';

const ROLES: ReadonlySet<string> = new Set<ChatRole>(['system', 'user', 'assistant', 'tool']);

/** a render message as the embedded model's chat message (object arguments as their JSON text) */
function chatMessage(m: RenderMessage, i: number): ChatSource {
  if (!ROLES.has(m.role)) throw new Error(`messages[${i}]: the embedded format has no role "${m.role}"`);
  const content = m.content ?? '';
  if (m.role === 'assistant')
    return {
      role: 'assistant',
      content,
      ...(m.tool_calls
        ? {
            tool_calls: m.tool_calls.map((c) => ({
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
  return { role: m.role as ChatRole, content };
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
