/**
 * The SEAL state a server owns across all its instances: the failure profile C_t of every
 * evaluated training rollout, the interface Omega_t new training instances are shown, the label
 * utilities rho (static, or dynamic by EMA) and the weight w_j of each rollout of the current
 * round. A round ends on `POST /round` or after a configured number of rollouts: the interface
 * evolves from the round's profile window, dynamic rho takes one step, the window resets.
 *
 * Validation rollouts are never observed: the profile describes the policy in training.
 *
 * Sessions reach it through `SessionSeal`. When worker threads hold the sessions, each worker has
 * a `SealMirror`: the interface and rho as the main thread last sent them (after every round),
 * and the rollouts its sessions evaluated, which go back to the main thread's one `SealState`.
 */
import type { Category } from '../envs/bfcl/data/tasks.js';
import {
  evolve,
  type InterfaceConfig,
  type InterfaceState,
  initialInterfaceState,
  promptView,
  resolveInterfaceConfig,
  type TrainingContext,
  trainingContext,
} from '../seal/interface.js';
import type { Label } from '../seal/labels.js';
import { FailureProfile, type ProfileSnapshot } from '../seal/profile.js';
import {
  DEFAULT_RHO,
  DEFAULT_W_MAX,
  DEFAULT_W_MIN,
  type DynamicRhoOptions,
  type DynamicRhoState,
  initialDynamicRho,
  type Rho,
  rolloutWeight,
  updateDynamicRho,
} from '../seal/weighting.js';

export interface SealStateOptions {
  readonly interface?: InterfaceConfig;
  /** end a round automatically after this many evaluated training rollouts; 0: only `POST /round` */
  readonly roundEvery?: number;
  /** move rho by EMA toward the profile's pressure at every round */
  readonly dynamicWeights?: boolean | DynamicRhoOptions;
  readonly rho?: Rho;
  readonly wMin?: number;
  readonly wMax?: number;
  /** at most this many per-rollout weights are kept for the current round (oldest dropped first) */
  readonly maxWeights?: number;
}

export interface RolloutWeight {
  readonly instance_id: string;
  readonly task_id: string;
  readonly category: Category;
  readonly reward: number;
  readonly labels: readonly Label[];
  readonly weight: number;
  /** the interface round the rollout was played under */
  readonly round: number;
}

export interface RoundReport {
  readonly round: number;
  readonly rollouts: number;
  readonly interface: InterfaceState;
  readonly rho: Rho;
  /** the window the round's evolution read */
  readonly profile: ProfileSnapshot;
}

/** What a round leaves for the sessions: the interface they are shown and the weighting. */
export interface SealView {
  readonly interface: InterfaceState;
  readonly rho: Rho;
  readonly wMin: number;
  readonly wMax: number;
}

/** The part of the SEAL state a session uses: what new instances are shown, w_j, the profile's intake. */
export interface SessionSeal {
  readonly ctx: TrainingContext;
  readonly interface: InterfaceState;
  /** what the current interface shows in prompts and tools (see `promptView`) */
  readonly promptView: string;
  /** w_j under the current rho */
  weightOf(labels: readonly Label[]): number;
  /** one evaluated training rollout joins the profile */
  observe(r: RolloutWeight): void;
}

const weightUnder = (view: SealView, labels: readonly Label[]): number =>
  rolloutWeight(labels, { rho: view.rho, wMin: view.wMin, wMax: view.wMax });

export class SealState implements SessionSeal {
  readonly ctx: TrainingContext = trainingContext('seal serve');
  private readonly profile = new FailureProfile();
  private omega: InterfaceState;
  private omegaView: string;
  private rhoState: DynamicRhoState;
  private readonly weights = new Map<string, RolloutWeight>();
  private rolloutsThisRound = 0;
  private rolloutsTotal = 0;
  private readonly roundEvery: number;
  private readonly maxWeights: number;
  private readonly dynamic: DynamicRhoOptions | undefined;
  private readonly wMin: number;
  private readonly wMax: number;
  private readonly roundListeners: ((view: SealView) => void)[] = [];

  constructor(private readonly options: SealStateOptions = {}) {
    resolveInterfaceConfig(options.interface); // a bad config fails at startup, not at the first round
    this.omega = initialInterfaceState(options.interface);
    this.omegaView = promptView(this.ctx, this.omega);
    this.rhoState = initialDynamicRho(options.rho ?? DEFAULT_RHO);
    this.roundEvery = options.roundEvery ?? 0;
    this.maxWeights = options.maxWeights ?? 100_000;
    this.wMin = options.wMin ?? DEFAULT_W_MIN;
    this.wMax = options.wMax ?? DEFAULT_W_MAX;
    const dw = options.dynamicWeights;
    this.dynamic = dw ? { ...(dw === true ? {} : dw), wMin: this.wMin, wMax: this.wMax } : undefined;
    rolloutWeight([], { rho: this.rho, wMin: this.wMin, wMax: this.wMax }); // validates the bounds
  }

  get interface(): InterfaceState {
    return this.omega;
  }

  /** What the current interface shows in prompts and tools (see `promptView`). */
  get promptView(): string {
    return this.omegaView;
  }

  get rho(): Rho {
    return this.rhoState.rho;
  }

  /** w_j under the current rho. */
  weightOf(labels: readonly Label[]): number {
    return weightUnder(this.view(), labels);
  }

  /** The interface and the weighting, as sessions elsewhere need them. */
  view(): SealView {
    return { interface: this.omega, rho: this.rho, wMin: this.wMin, wMax: this.wMax };
  }

  /** Calls `listener` with the new view at the end of every round. */
  onRound(listener: (view: SealView) => void): void {
    this.roundListeners.push(listener);
  }

  /** Adds one evaluated training rollout; ends the round when the configured count is reached. */
  observe(r: RolloutWeight): void {
    this.profile.observe({ taskId: r.task_id, category: r.category, reward: r.reward, labels: r.labels });
    this.weights.delete(r.instance_id);
    this.weights.set(r.instance_id, r);
    if (this.weights.size > this.maxWeights) this.weights.delete(this.weights.keys().next().value!);
    this.rolloutsThisRound++;
    this.rolloutsTotal++;
    if (this.roundEvery > 0 && this.rolloutsThisRound >= this.roundEvery) this.endRound();
  }

  /** Omega_{t+1} = Evolve(Omega_t, C_t); dynamic rho steps; the window and the round's weights reset. */
  endRound(): RoundReport {
    const snapshot = this.profile.snapshot();
    const rollouts = this.rolloutsThisRound;
    this.omega = evolve(this.omega, snapshot, this.options.interface);
    this.omegaView = promptView(this.ctx, this.omega);
    if (this.dynamic) this.rhoState = updateDynamicRho(this.rhoState, snapshot.window.overall, this.dynamic);
    this.profile.resetWindow();
    this.weights.clear();
    this.rolloutsThisRound = 0;
    if (this.roundListeners.length > 0) {
      const view = this.view();
      for (const l of this.roundListeners) l(view);
    }
    return { round: this.omega.round, rollouts, interface: this.omega, rho: this.rho, profile: snapshot };
  }

  profileView() {
    return {
      round: this.omega.round,
      rollouts_this_round: this.rolloutsThisRound,
      rollouts_total: this.rolloutsTotal,
      round_every: this.roundEvery,
      profile: this.profile.snapshot(),
    };
  }

  weightsView(instanceIds?: readonly string[]) {
    const rows = instanceIds
      ? instanceIds.map((id) => this.weights.get(id)).filter((r): r is RolloutWeight => r !== undefined)
      : [...this.weights.values()];
    return {
      round: this.omega.round,
      dynamic: this.dynamic !== undefined,
      rho: this.rho,
      w_min: this.wMin,
      w_max: this.wMax,
      rollouts: rows,
    };
  }
}

/**
 * A worker thread's copy of the SEAL state its sessions read: the main thread's view as of its
 * last message, and the rollouts evaluated since the last `drain`, for the main thread's profile.
 */
export class SealMirror implements SessionSeal {
  readonly ctx: TrainingContext = trainingContext('seal serve');
  private current!: SealView;
  private view!: string;
  private observed: RolloutWeight[] = [];

  constructor(view: SealView) {
    this.update(view);
  }

  update(view: SealView): void {
    this.current = view;
    this.view = promptView(this.ctx, view.interface);
  }

  get interface(): InterfaceState {
    return this.current.interface;
  }

  get promptView(): string {
    return this.view;
  }

  weightOf(labels: readonly Label[]): number {
    return weightUnder(this.current, labels);
  }

  observe(r: RolloutWeight): void {
    this.observed.push(r);
  }

  /** The rollouts observed since the last call. */
  drain(): RolloutWeight[] | undefined {
    if (this.observed.length === 0) return undefined;
    const out = this.observed;
    this.observed = [];
    return out;
  }
}
