// Placeholder until the VehicleControlAPI port lands: every call fails loudly.
import type { ApiClass, BfclApi } from './api.js';

export const vehicleControl: ApiClass<BfclApi> = {
  className: 'VehicleControlAPI',
  stateless: false,
  create() {
    throw new Error('VehicleControlAPI is not ported yet');
  },
  methods: {},
};
