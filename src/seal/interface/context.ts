/**
 * The training-time guard of the interface Omega_t.
 *
 * SEAL removes the evolved interface at evaluation: the policy must then meet the original
 * environment (docs/method.md, section 1: The problem). Two locks make that hard to get wrong:
 *
 * - types: every function that changes what a policy sees takes a `TrainingContext` first. The
 *   class is not exported as a value and carries an ES private field, so it is nominal: an object
 *   literal, an `EvaluationContext`, or anything else fails to type-check. The only way to get one
 *   is `trainingContext()`, which the trainer calls and the evaluation path never does.
 * - runtime: the same functions call `assertTrainingContext`, which throws
 *   `InterfaceUnavailableError` for an evaluation context cast to the training type, a forged
 *   object, or a context the trainer has closed.
 */

/** Proof that the caller is a trainer; required by every function that applies the interface. */
class TrainingContext {
  readonly phase = 'training' as const;
  readonly #issued = true;
  #open = true;

  constructor(readonly run: string) {}

  get open(): boolean {
    return this.#open;
  }

  /** After closing (e.g. when the trainer switches to validation), applying the interface throws. */
  close(): void {
    this.#open = false;
  }

  static issued(x: unknown): x is TrainingContext {
    return typeof x === 'object' && x !== null && #issued in x;
  }
}

/** What the evaluation path carries instead; it cannot be used to apply the interface. */
class EvaluationContext {
  readonly phase = 'evaluation' as const;
  readonly #evaluation = true;

  constructor(readonly run: string) {}

  static is(x: unknown): x is EvaluationContext {
    return typeof x === 'object' && x !== null && #evaluation in x;
  }
}

// Types only: without the class values, nothing outside this file can construct either context.
export type { EvaluationContext, TrainingContext };

/** For the trainer only: evaluation code must never call this (it has `evaluationContext`). */
export function trainingContext(run = 'training'): TrainingContext {
  return new TrainingContext(run);
}

export function evaluationContext(run = 'evaluation'): EvaluationContext {
  return new EvaluationContext(run);
}

export class InterfaceUnavailableError extends Error {
  override readonly name = 'InterfaceUnavailableError';
}

export function assertTrainingContext(ctx: unknown): asserts ctx is TrainingContext {
  if (
    EvaluationContext.is(ctx) ||
    (typeof ctx === 'object' && ctx !== null && 'phase' in ctx && ctx.phase === 'evaluation')
  )
    throw new InterfaceUnavailableError(
      'the SEAL training interface cannot be applied during evaluation: evaluation must show the policy the ' +
        'original tools, errors and prompt. Render the observation without the interface.',
    );
  if (!TrainingContext.issued(ctx))
    throw new InterfaceUnavailableError(
      'applying the SEAL training interface needs a TrainingContext from trainingContext() (the trainer owns it); ' +
        `got ${ctx === null ? 'null' : typeof ctx}`,
    );
  if (!ctx.open)
    throw new InterfaceUnavailableError(
      `the training context '${ctx.run}' is closed: the interface is not applied outside training rounds`,
    );
}
