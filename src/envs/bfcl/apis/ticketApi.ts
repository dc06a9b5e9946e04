// Placeholder until the TicketAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const ticketApi: ApiClass<BfclApi> = {
  className: 'TicketAPI',
  stateless: false,
  create() {
    throw new Error('TicketAPI is not ported yet');
  },
  methods: {},
};
