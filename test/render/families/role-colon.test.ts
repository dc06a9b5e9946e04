import { describe, expect, it } from 'vitest';
import { RenderRefused } from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { describeGoldens } from './check.js';

describeGoldens('role_colon');

describe('role_colon', () => {
  const family = chatFamily('role_colon', { eosToken: '<|end_of_text|>' });

  it('refuses a tool declaration, naming the text formats that carry tools', () => {
    expect(() => family.toolDeclaration([{ name: 'f', description: '', parameters: {} }], '')).toThrow(
      /--format hermes or python/,
    );
    expect(() => family.toolDeclaration([], '')).toThrow(RenderRefused);
  });

  it('reads a completion cut at the next user turn, or ended by eos, as clean', () => {
    expect(family.parse(' Paris.\n\nUser:')).toEqual({
      content: 'Paris.',
      reasoning: null,
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
    expect(family.parse(' Paris.<|end_of_text|>').ok).toBe(true);
    expect(family.parse(' Paris.\n\nUser:<|end_of_text|>').ok).toBe(false);
    expect(family.parse(' Paris. And').ok).toBe(false);
    expect(family.parse(' a\n\nUser: b\n\nUser:').ok).toBe(false);
  });
});
