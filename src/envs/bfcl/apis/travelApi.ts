// Placeholder until the TravelAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const travelApi: ApiClass<BfclApi> = {
  className: 'TravelAPI',
  stateless: false,
  create() {
    throw new Error('TravelAPI is not ported yet');
  },
  methods: {},
};
