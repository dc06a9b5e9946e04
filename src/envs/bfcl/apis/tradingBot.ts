// Placeholder until the TradingBot port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const tradingBot: ApiClass<BfclApi> = {
  className: 'TradingBot',
  stateless: false,
  create() {
    throw new Error('TradingBot is not ported yet');
  },
  methods: {},
};
