// Placeholder until the MessageAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const messageApi: ApiClass<BfclApi> = {
  className: 'MessageAPI',
  stateless: false,
  create() {
    throw new Error('MessageAPI is not ported yet');
  },
  methods: {},
};
