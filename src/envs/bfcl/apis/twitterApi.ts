// Placeholder until the TwitterAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const twitterApi: ApiClass<BfclApi> = {
  className: 'TwitterAPI',
  stateless: false,
  create() {
    throw new Error('TwitterAPI is not ported yet');
  },
  methods: {},
};
