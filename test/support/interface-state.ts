/**
 * The training interface with everything on: every component, and every guideline active (a
 * failure profile in which each guideline's label is frequent). What a test shows a policy when it
 * wants all the interface text there is.
 */
import {
  evolve,
  GUIDELINE_LABELS,
  type InterfaceState,
  initialInterfaceState,
} from '../../src/seal/interface.js';

export function fullInterfaceState(): InterfaceState {
  const config = {
    components: { schemaCues: 'on', errorFeedback: 'on', guidelines: 'on' },
    maxGuidelines: GUIDELINE_LABELS.length,
  } as const;
  const stats = { count: 30, prevalence: 0.3, meanReward: 0.1, rollouts: 30 };
  const view = {
    overall: {
      turns: 100,
      rollouts: 25,
      meanReward: 0.1,
      labels: Object.fromEntries(GUIDELINE_LABELS.map((l) => [l, stats])),
    },
    byCategory: {},
    byPosition: {},
    lastDominantByTask: {},
  };
  return evolve(initialInterfaceState(config), { version: 1, window: view, total: view } as never, config);
}
