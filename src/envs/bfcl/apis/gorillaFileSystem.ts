// Placeholder until the GorillaFileSystem port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const gorillaFileSystem: ApiClass<BfclApi> = {
  className: 'GorillaFileSystem',
  stateless: false,
  create() {
    throw new Error('GorillaFileSystem is not ported yet');
  },
  methods: {},
};
