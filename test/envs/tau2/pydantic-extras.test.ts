/**
 * The pydantic pieces telecom added to the τ² base: str Enums (validated by value, `$defs` in
 * the schema), dates and datetimes held as the text `str()` gives them, and mutable defaults that
 * no two instances share.
 */
import { describe, expect, it } from 'vitest';
import { parsePyJson } from '../../../src/envs/py/json.js';
import type { PyValue } from '../../../src/envs/py/values.js';
import {
  date,
  datetime,
  enumOf,
  field,
  jsonSchema,
  list,
  type Model,
  model,
  modelDump,
  str,
} from '../../../src/envs/tau2/pydantic.js';

const py = (json: string) => parsePyJson(json);

interface Bill {
  bill_id: string;
  issued: string;
  created: string;
  status: string;
  items: PyValue[];
}
const Bill = model<Bill>(
  'Bill',
  [
    field('bill_id', str),
    field('issued', date),
    field('created', datetime),
    field('status', enumOf('BillStatus', ['Draft', 'Paid']), 'Draft'),
    field('items', list(str), []),
  ],
  true,
);

describe('pydantic extras for telecom', () => {
  it('dates and datetimes validate from ISO text and hold str() of the value', () => {
    const b = Bill.parse(py('{"bill_id": "B1", "issued": "2025-02-01", "created": "2025-01-20T14:30:00"}'));
    expect(b.issued).toBe('2025-02-01');
    expect(b.created).toBe('2025-01-20 14:30:00');
    expect(Bill.parse(py('{"bill_id": "B1", "issued": "2025-02-01", "created": "2025-01-20"}')).created).toBe(
      '2025-01-20 00:00:00',
    );
    expect(() =>
      Bill.parse(py('{"bill_id": "B1", "issued": "2025-02-30", "created": "2025-01-20"}')),
    ).toThrow(/issued\n {2}Input should be a valid date or datetime/);
  });

  it("an enum takes its values only, with pydantic's message", () => {
    expect(() =>
      Bill.parse(py('{"bill_id": "B1", "issued": "2025-02-01", "created": "2025-01-20", "status": "paid"}')),
    ).toThrow(
      "1 validation error for Bill\nstatus\n  Input should be 'Draft' or 'Paid' [type=enum, input_value='paid', input_type=str]",
    );
  });

  it('an enum field refers to $defs in the JSON schema, with no title of its own', () => {
    const schema = jsonSchema(
      'parameters',
      [field('status', enumOf('BillStatus', ['Draft', 'Paid']))],
      () => undefined,
      () => undefined,
    );
    expect(JSON.stringify(schema)).toBe(
      '{"$defs":{"BillStatus":{"enum":["Draft","Paid"],"title":"BillStatus","type":"string"}},"properties":{"status":{"$ref":"#/$defs/BillStatus"}},"required":["status"],"title":"parameters","type":"object"}',
    );
  });

  it('a model that forbids extra keys says so in the schema', () => {
    const schema = jsonSchema(
      'parameters',
      [field('bill', Bill)],
      () => undefined,
      () => undefined,
    );
    const defs = (schema.$defs as Record<string, Record<string, unknown>>).Bill!;
    expect(Object.keys(defs)).toEqual(['additionalProperties', 'properties', 'required', 'title', 'type']);
    expect(defs.additionalProperties).toBe(false);
  });

  it('no two instances share a mutable default', () => {
    const a: Model<Bill> = Bill.parse(
      py('{"bill_id": "A", "issued": "2025-02-01", "created": "2025-01-20"}'),
    );
    const b: Model<Bill> = Bill.parse(
      py('{"bill_id": "B", "issued": "2025-02-01", "created": "2025-01-20"}'),
    );
    a.items.push('x');
    expect(modelDump(b).get('items')).toEqual([]);
    const c = Bill.make({ bill_id: 'C', issued: '2025-02-01', created: '2025-01-20 00:00:00' } as Bill);
    expect(c.items).not.toBe(a.items);
    expect(c.items).toEqual([]);
  });
});
