/**
 * role_colon: the plain `User: ...` / `Assistant: ...` transcript the cookbook trains base models
 * with (Llama 3 and Qwen3 base models, DeepSeek-V3.1-Base). A completion ends where the model
 * starts the next user turn (`\n\nUser:`). There is no tool-call convention: tools go into the
 * system prompt as text (seal's hermes or python formats) and calls are read from the text.
 */
import {
  type ChatFamily,
  type FamilyMessage,
  type ParsedCompletion,
  type Piece,
  RenderRefused,
  type ToolSpec,
} from './family.js';
import { type FamilyOptions, registerFamily } from './index.js';

const CONTENT_PREFIX = ' ';
const CONTENT_SUFFIX = '\n\n';
const STOP = '\n\nUser:';

function header(m: FamilyMessage): string {
  return `${m.role.charAt(0).toUpperCase()}${m.role.slice(1)}:`;
}

// An assistant's tool calls are not written: in this format a call is the message's own text (a
// text format writes it there), so only a reasoning part, which has no place, is refused.
function textOnly(m: FamilyMessage): string {
  if (m.thinking !== undefined)
    throw new RenderRefused(`role_colon renders text only; this ${m.role} message has a reasoning part`);
  return m.content;
}

function messagePieces(m: FamilyMessage): Piece[] {
  return [{ text: header(m) }, { text: CONTENT_PREFIX + textOnly(m) + CONTENT_SUFFIX }];
}

export function roleColon(options: FamilyOptions): ChatFamily {
  const bos: Piece[] = options.bosToken ? [{ text: options.bosToken }] : [];
  return {
    name: 'role_colon',
    extension: true,
    stop: [STOP],
    toolDeclaration(_tools: readonly ToolSpec[]): FamilyMessage[] {
      throw new RenderRefused(
        'role_colon has no tool-call convention: use a text format (--format hermes or python), which writes the tools into the system prompt',
      );
    },
    generationPrompt(messages) {
      return [...bos, ...messages.flatMap(messagePieces), { text: 'Assistant:' }];
    },
    supervised(messages) {
      const last = messages[messages.length - 1];
      // the trained turn ends with the start of the next user turn, the stop sequence
      const overlap: Piece[] = last?.role === 'assistant' ? [{ text: 'User:' }] : [];
      return [...bos, ...messages.flatMap(messagePieces), ...overlap];
    },
    parse(completion): ParsedCompletion {
      let text = completion;
      let eos = false;
      if (options.eosToken && text.endsWith(options.eosToken)) {
        text = text.slice(0, -options.eosToken.length);
        eos = true;
      }
      const parts = text.split(STOP);
      let content = parts[0]!;
      if (content.startsWith(CONTENT_PREFIX)) content = content.slice(CONTENT_PREFIX.length);
      if (content.endsWith(CONTENT_SUFFIX)) content = content.slice(0, -CONTENT_SUFFIX.length);
      // one stop and no eos after it, or an eos with no stop: a clean end
      const ok = parts.length === 2 ? !eos : parts.length === 1 && eos;
      return { content, reasoning: null, toolCalls: [], unparsed: [], ok };
    },
  };
}

registerFamily('role_colon', roleColon);
