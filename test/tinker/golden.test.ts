/**
 * The wire golden cases made with the Tinker SDK's own protobuf schema and decoder: every request
 * built through the client's own path (caller datums -> wire datums -> body) encodes to exactly the
 * recorded protobuf bytes and JSON, and every recorded result body decodes to exactly what the SDK
 * decoded.
 */
import { describe, expect, it } from 'vitest';
import type { LossFnInputs, TinkerDatum } from '../../src/tinker/datums.js';
import {
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
} from '../../src/tinker/proto.js';
import { encodeForwardBackward, forwardBackwardRequest, wireData } from '../../src/tinker/requests.js';
import type {
  ForwardBackwardOutput,
  ForwardBackwardRequestJson,
  SampleResponse,
} from '../../src/tinker/schemas.js';
import { readTinkerJsonl, tinkerGoldenDirs } from '../support/tinker-golden.js';

interface RequestCase {
  request: ForwardBackwardRequestJson;
  forward_only: boolean;
  proto_hex: string;
}
interface DecodeCase<T> {
  proto_hex: string;
  decoded: T;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

/** the recorded request as a caller of the client would have given it */
function callerDatums(req: ForwardBackwardRequestJson): TinkerDatum[] {
  return req.forward_backward_input.data.map((d) => ({
    modelInput: d.model_input,
    lossFnInputs: Object.fromEntries(
      Object.entries(d.loss_fn_inputs).map(([k, t]) => [k, t.data]),
    ) as unknown as LossFnInputs,
  }));
}

for (const { name, dir } of tinkerGoldenDirs()) {
  describe(`Tinker wire golden cases (${name})`, () => {
    const requests = readTinkerJsonl<RequestCase>(dir, 'fwdbwd_requests.jsonl');
    const outputs = readTinkerJsonl<DecodeCase<ForwardBackwardOutput>>(dir, 'fwdbwd_outputs.jsonl');
    const samples = readTinkerJsonl<DecodeCase<SampleResponse>>(dir, 'sample_responses.jsonl');

    it('has cases of each kind', () => {
      expect(requests.length).toBeGreaterThanOrEqual(40);
      expect(outputs.length).toBeGreaterThanOrEqual(40);
      expect(samples.length).toBeGreaterThanOrEqual(40);
    });

    it('encodes every forward_backward request to the recorded protobuf bytes and JSON', () => {
      requests.forEach((c, i) => {
        const input = c.request.forward_backward_input;
        const loss = { fn: input.loss_fn, ...(input.loss_fn_config ? { config: input.loss_fn_config } : {}) };
        const req = forwardBackwardRequest(
          c.request.model_id,
          c.request.seq_id,
          wireData(callerDatums(c.request), loss),
          loss,
        );
        const proto = encodeForwardBackward(req, 'proto', c.forward_only);
        expect(proto.route).toBe('forward_backward');
        expect(hex(proto.body as Uint8Array), `case ${i}`).toBe(c.proto_hex);
        const asJson = encodeForwardBackward(req, 'json', false);
        expect(JSON.parse(asJson.body as string), `case ${i}`).toEqual(c.request);
        if (c.forward_only) {
          const fwd = encodeForwardBackward(req, 'json', true);
          expect(fwd.route).toBe('forward');
          expect(JSON.parse(fwd.body as string)).toEqual({
            model_id: c.request.model_id,
            seq_id: c.request.seq_id,
            forward_input: input,
          });
        }
        // what a server reads back from the bytes is the JSON request again
        const back = decodeForwardBackwardRequest(bytes(c.proto_hex));
        expect(back.forwardOnly).toBe(c.forward_only);
        expect(back.request).toEqual(c.request);
      });
    });

    it('decodes every forward_backward output to what the SDK decoded', () => {
      outputs.forEach((c, i) => {
        expect(decodeForwardBackwardOutput(bytes(c.proto_hex)), `case ${i}`).toEqual(c.decoded);
      });
    });

    it('decodes every sample response to what the SDK decoded', () => {
      samples.forEach((c, i) => {
        const decoded = decodeSampleResponse(bytes(c.proto_hex));
        expect(decoded, `case ${i}`).toEqual(c.decoded);
        expect(decoded.topk_prompt_logprobs).toBeUndefined();
      });
    });

    it('writes results that decode back to themselves (the test server writes these)', () => {
      for (const c of outputs) {
        expect(decodeForwardBackwardOutput(encodeForwardBackwardOutput(c.decoded))).toEqual(c.decoded);
      }
      for (const c of samples)
        expect(decodeSampleResponse(encodeSampleResponse(c.decoded))).toEqual(c.decoded);
    });
  });
}
