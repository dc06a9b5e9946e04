// Placeholder until the MathAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const mathApi: ApiClass<BfclApi> = {
  className: 'MathAPI',
  stateless: true,
  create() {
    throw new Error('MathAPI is not ported yet');
  },
  methods: {},
};
