// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { CLASS_NAMES } from '../src/envs/bfcl/apis/api.js';
import { API_CLASSES } from '../src/envs/bfcl/apis/index.js';
import { readOracle, sharedData } from './support/golden.js';

interface ReferenceTables {
  classes: Record<
    string,
    { methods: Record<string, { params_in_python_order: { name: string; required: boolean }[] }> }
  >;
}
const tables = JSON.parse(readOracle('class_reference_tables.json')) as ReferenceTables;

// Positional arguments bind in the Python parameter order, and binding errors name required
// parameters, so every method table must agree with the reference signatures exactly.
describe('API method tables match the reference classes', () => {
  for (const cls of CLASS_NAMES) {
    it(`${cls}: same public methods, parameter order and required flags`, () => {
      const ours = API_CLASSES[cls].methods;
      const ref = tables.classes[cls]!.methods;
      expect(Object.keys(ours).sort()).toEqual(Object.keys(ref).sort());
      for (const [name, spec] of Object.entries(ref)) {
        expect(ours[name]!.params, `${cls}.${name}`).toEqual(
          spec.params_in_python_order.map((p) => ({ name: p.name, required: p.required })),
        );
      }
    });
  }

  it('the function docs describe exactly the methods that exist', () => {
    const data = sharedData();
    for (const cls of CLASS_NAMES) {
      const docNames = (data.docsByClass.get(cls) ?? []).map((d) => d.name).sort();
      expect(docNames, cls).toEqual(Object.keys(API_CLASSES[cls].methods).sort());
    }
  });
});
