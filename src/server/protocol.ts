/**
 * The wire protocol of the SEAL / AgentEvolver env service, as schemas. Every POST route takes
 * the same envelope `{env_type, task_id, instance_id, messages, params}` and answers
 * `{success, data}`; errors answer `{detail}` (a string, or for a body that breaks its schema a
 * list of `{loc, msg}` naming each field, the shape FastAPI gives the reference's clients).
 *
 * Unknown keys are kept, not rejected: the reference trainer sends its whole `env_service.bfcl`
 * config block as creation params, most of which configures things this server does its own way.
 */
import { z } from 'zod';
import { TOOL_CALL_FORMATS, type ToolCallFormat } from '../agent/format.js';
import { COMPONENTS, type InterfaceComponent } from '../seal/interface.js';

/** `messages` and `params` default to `{}` (null included: clients send `params or {}` loosely). */
const objectOrEmpty = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((v) => v ?? {});

export const Envelope = z.object({
  env_type: z.string().nullish(),
  /** the reference also takes a line number, which arrives as a JSON number */
  task_id: z
    .union([z.string(), z.number().int().nonnegative()])
    .nullish()
    .transform((v) => (v === null || v === undefined ? undefined : String(v))),
  instance_id: z.string().max(256).nullish(),
  messages: objectOrEmpty,
  params: objectOrEmpty,
});
export type Envelope = z.output<typeof Envelope>;

/** One OpenAI-style tool call, as a trainer forwards it from its sampler. */
const ToolCallIn = z.looseObject({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({
    name: z.string(),
    /** JSON text (OpenAI) or an already parsed object (some trainers) */
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});

/** `/step`'s `messages`: the assistant's raw message. */
export const AssistantMessage = z.looseObject({
  role: z.literal('assistant').optional(),
  content: z.string().nullish(),
  tool_calls: z.array(ToolCallIn).nullish(),
});
export type AssistantMessage = z.output<typeof AssistantMessage>;

const Switch = z.looseObject({ enable: z.boolean().optional(), apply_to_validation: z.boolean().optional() });

/** The reference's prompt modes and parsers this server speaks, and the project format each maps to. */
export const REFERENCE_FORMATS: Readonly<Record<string, ToolCallFormat>> = {
  bfcl_qwen_fc: 'hermes',
  xml_json: 'hermes',
  hermes: 'hermes',
};

/** Reference keys that switch one interface component each (absent = off, as in the reference). */
export const REFERENCE_INTERFACE_KEYS: Readonly<Record<string, InterfaceComponent>> = {
  observation_lite: 'schemaCues',
  tool_feedback_evolution: 'errorFeedback',
  diagnostic_evolution: 'guidelines',
};

const VALIDATION_MODES = ['validate', 'validation', 'val', 'test', 'eval', 'evaluation'];

export const CreateParams = z.looseObject({
  /** the project's name for the tool-call format; wins over the reference's keys */
  format: z.enum(TOOL_CALL_FORMATS).optional(),
  tool_prompt_mode: z.string().optional(),
  tool_call_parser: z.string().optional(),
  /** the reference trainer's rollout mode; a validation mode gets no interface at all */
  rollout_mode: z.string().nullish(),
  mode: z.enum(['train', 'validation']).optional(),
  /** per-instance switches of the server's interface components (default: all on) */
  interface: z
    .strictObject(
      Object.fromEntries(COMPONENTS.map((c) => [c, z.boolean().optional()])) as Record<
        InterfaceComponent,
        z.ZodOptional<z.ZodBoolean>
      >,
    )
    .optional(),
  observation_lite: Switch.optional(),
  tool_feedback_evolution: Switch.optional(),
  diagnostic_evolution: Switch.optional(),
  /** `reply` (the env service: an error message goes back, the policy may retry) or `end_turn` (BFCL's loop) */
  on_parse_error: z.enum(['reply', 'end_turn']).optional(),
});
export type CreateParams = z.output<typeof CreateParams>;

export const EvaluateParams = z.looseObject({ sparse: z.boolean().nullish() });

export const ProfileParams = z.looseObject({
  split: z.string().optional(),
  category: z.union([z.string(), z.array(z.string())]).optional(),
});

/** `POST /weights`: `params.instance_ids`, or none for the whole round. */
export const WeightIds = z.array(z.string()).optional();

export interface InstanceOptions {
  readonly format: ToolCallFormat;
  readonly validation: boolean;
  /** components this instance shows (training only) */
  readonly components: Readonly<Record<InterfaceComponent, boolean>>;
  readonly onParseError: 'reply' | 'end_turn';
}

function isValidationMode(params: CreateParams): boolean {
  if (params.mode) return params.mode === 'validation';
  return VALIDATION_MODES.includes(String(params.rollout_mode ?? '').toLowerCase());
}

/** The options of a new instance, from its creation params. */
export function instanceOptions(params: CreateParams): InstanceOptions {
  let format: ToolCallFormat = params.format ?? 'hermes';
  if (!params.format) {
    for (const key of ['tool_call_parser', 'tool_prompt_mode'] as const) {
      const v = params[key];
      if (v === undefined) continue;
      const mapped = REFERENCE_FORMATS[v];
      if (!mapped)
        throw new ValidationError([
          {
            loc: ['body', 'params', key],
            msg: `'${v}' is not supported; use ${Object.keys(REFERENCE_FORMATS).join(', ')}, or params.format (${TOOL_CALL_FORMATS.join(', ')})`,
          },
        ]);
      format = mapped;
    }
  }
  const validation = isValidationMode(params);
  const components = { schemaCues: true, errorFeedback: true, guidelines: true };
  const referenceKeys = Object.keys(REFERENCE_INTERFACE_KEYS).filter((k) => params[k] !== undefined);
  if (referenceKeys.length > 0) {
    // The reference's semantics: a component is shown only when its block says enable.
    for (const [key, component] of Object.entries(REFERENCE_INTERFACE_KEYS)) {
      const block = params[key] as z.output<typeof Switch> | undefined;
      components[component] = block?.enable === true;
    }
  }
  for (const c of COMPONENTS) {
    const v = params.interface?.[c];
    if (v !== undefined) components[c] = v;
  }
  return { format, validation, components, onParseError: params.on_parse_error ?? 'reply' };
}

/** FastAPI-shaped 422 details: one `{loc, msg}` per problem, `loc` starting at `body`. */
export function zodDetail(
  error: z.ZodError,
  prefix: readonly (string | number)[],
): { loc: (string | number)[]; msg: string }[] {
  return error.issues.map((i) => ({
    loc: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: i.message,
  }));
}

/** Parses `value` with `schema`, or throws a ValidationError (422) naming where it broke. */
export function parseAt<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: readonly (string | number)[],
): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new ValidationError(zodDetail(r.error, prefix));
}

/** A body that breaks its schema, or asks for something the server cannot do: answered 422. */
export class ValidationError extends Error {
  constructor(readonly detail: { loc: (string | number)[]; msg: string }[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
}
