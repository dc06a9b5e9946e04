/**
 * The shapes τ²-bench v0.2.0 works with, as seal holds them: messages (the reference's results
 * format writes them exactly so), tasks (as its tasks.json has them), and the contract of a
 * domain's environment. A domain (retail, airline, telecom) implements `Tau2Domain`; the
 * orchestrator, the evaluator and `seal eval` use nothing else of it.
 *
 * Values that reach a tool (arguments, initialisation data) are Python values (`envs/py`): the
 * reference reads the model's arguments with `json.loads`, so `10` and `10.0` differ in what a
 * tool stores and prints, and dict order is the order written.
 */
import type { PyDict, PyValue } from '../py/values.js';

export type Tau2DomainName = 'retail' | 'airline' | 'telecom';
export const TAU2_DOMAINS: readonly Tau2DomainName[] = ['retail', 'airline', 'telecom'];

/** Who made a tool call: the agent (`assistant`) or, in telecom, the user on their phone. */
export type Requestor = 'user' | 'assistant';

export interface Tau2ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: PyDict;
  readonly requestor: Requestor;
}

/** What a tool call returns, as the reference's `Environment.get_response` makes it. */
export interface ToolResponse {
  /** `to_json_str` of the result, or `Error: <message>` when the tool raised */
  readonly content: string;
  readonly error: boolean;
}

export interface Tau2SystemMessage {
  readonly role: 'system';
  readonly content: string | null;
  readonly turn_idx?: number | null;
  readonly timestamp?: string | null;
}
export interface Tau2ParticipantMessage {
  readonly role: 'assistant' | 'user';
  readonly content: string | null;
  readonly tool_calls: readonly Tau2ToolCall[] | null;
  readonly turn_idx?: number | null;
  readonly timestamp?: string | null;
  readonly cost?: number | null;
  readonly usage?: Record<string, unknown> | null;
  readonly raw_data?: Record<string, unknown> | null;
}
export interface Tau2ToolMessage {
  readonly role: 'tool';
  readonly id: string;
  readonly content: string | null;
  readonly requestor: Requestor;
  readonly error: boolean;
  readonly turn_idx?: number | null;
  readonly timestamp?: string | null;
}
export type Tau2Message = Tau2SystemMessage | Tau2ParticipantMessage | Tau2ToolMessage;

/** A function run on the agent's or the user's toolkit by name: initialisation actions, assertions. */
export interface EnvFunctionCall {
  readonly env_type: Requestor;
  readonly func_name: string;
  readonly arguments: PyDict;
}
export interface EnvAssertion extends EnvFunctionCall {
  /** default true */
  readonly assert_value: boolean;
  readonly message?: string | null;
}

/** A gold action of a task's evaluation criteria. */
export interface Tau2Action {
  readonly action_id: string;
  /** default `assistant` */
  readonly requestor: Requestor;
  readonly name: string;
  readonly arguments: PyDict;
  readonly info?: string | null;
  /** the arguments compared with a call; null: all of the call's */
  readonly compare_args?: readonly string[] | null;
}

export type RewardType = 'DB' | 'ENV_ASSERTION' | 'NL_ASSERTION' | 'ACTION' | 'COMMUNICATE';

export interface EvaluationCriteria {
  readonly actions?: readonly Tau2Action[] | null;
  readonly env_assertions?: readonly EnvAssertion[] | null;
  readonly communicate_info?: readonly string[] | null;
  readonly nl_assertions?: readonly string[] | null;
  /** default `['DB', 'COMMUNICATE']` */
  readonly reward_basis: readonly RewardType[];
}

export interface InitialState {
  readonly initialization_data?: {
    readonly agent_data?: PyDict | null;
    readonly user_data?: PyDict | null;
  } | null;
  readonly initialization_actions?: readonly EnvFunctionCall[] | null;
  readonly message_history?: readonly Tau2Message[] | null;
}

export interface StructuredUserInstructions {
  readonly domain: string;
  readonly reason_for_call: string;
  readonly known_info?: string | null;
  readonly unknown_info?: string | null;
  readonly task_instructions: string;
}

export interface UserScenario {
  readonly persona?: string | null;
  readonly instructions: StructuredUserInstructions | string;
}

export interface Tau2Task {
  readonly id: string;
  readonly description?: {
    readonly purpose?: string | null;
    readonly relevant_policies?: string | null;
    readonly notes?: string | null;
  } | null;
  readonly user_scenario: UserScenario;
  readonly ticket?: string | null;
  readonly initial_state?: InitialState | null;
  readonly evaluation_criteria?: EvaluationCriteria | null;
}

/** A tool as a model is shown it: the OpenAI function shape the reference's `Tool.openai_schema` gives. */
export interface Tau2ToolSchema {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    /** the pydantic JSON schema of the parameters, key order as pydantic writes it */
    readonly parameters: Record<string, unknown>;
  };
}

export type ToolKind = 'read' | 'write' | 'think' | 'generic';

/** A tool's documentation as the reference's docstring parser reads it (Google style). */
export interface ToolDoc {
  /** the first line of the cleaned docstring (docstring_parser's `short_description`; '' for none) */
  readonly short: string;
  /** the rest before the first section (Args, Returns, Raises), stripped; possibly empty */
  readonly long: string;
  /** each parameter's description, by name */
  readonly params: ReadonlyMap<string, string>;
}

/**
 * The prose a model is shown about the tools. It is the reference's own (docstrings and pydantic
 * field descriptions), read from the pinned source files `seal data pull tau2` downloads, so seal
 * commits none of it. Without those files every lookup is undefined and a tool is described by
 * its name, as the reference describes a tool that has no docstring.
 */
export interface ToolDocs {
  /** whether the reference's source files were found */
  readonly available: boolean;
  /** a method's docstring: `owner` is the toolkit class (`RetailTools`, `TelecomUserTools`, ...) */
  tool(owner: string, name: string): ToolDoc | undefined;
  /** a pydantic model field's `Field(description=...)` (`FlightInfo`, `flight_number`) */
  field(model: string, field: string): string | undefined;
  /**
   * a class's own docstring, cleaned as pydantic cleans it for a model's JSON-schema
   * `description` (`APNSettings`); undefined when the class has none. A class name that two
   * domains define is qualified by the domain: `airline.User`.
   */
  model(name: string): string | undefined;
}

/**
 * One task's environment: the agent's tools on the domain database and, in telecom, the user's
 * tools on their phone. Every method behaves as the reference's `Environment` does.
 */
export interface Tau2Environment {
  readonly domain: Tau2DomainName;
  /** the policy text the agent is given */
  readonly policy: string;
  /** the agent's tools, in the reference's order */
  agentTools(): readonly Tau2ToolSchema[];
  /** the user's tools (empty outside telecom) */
  userTools(): readonly Tau2ToolSchema[];
  /** a tool's kind (read, write, ...), or undefined when the side has no such tool */
  toolKind(requestor: Requestor, name: string): ToolKind | undefined;
  /**
   * `get_response`: run the call on the requestor's toolkit and sync the tools. Never throws for
   * anything a model can send (unknown tool, bad arguments, a tool's own error): those come back
   * as `Error: ...` with `error: true`, byte for byte as the reference writes them.
   */
  respond(call: Tau2ToolCall): ToolResponse;
  /**
   * `make_tool_call`: run the call on the requestor's toolkit and return the tool's Python result,
   * WITHOUT syncing the tools; throws what the tool raises. The evaluator builds the gold
   * environment this way, and in telecom the missing sync shows in the user database.
   */
  makeToolCall(call: Tau2ToolCall): PyValue;
  /** `initialization_data`: merge into the agent's or the user's database as the reference updates a pydantic model */
  updateDb(side: Requestor, data: PyDict): void;
  /**
   * `run_env_function_call`: any method of that side's toolkit, tools and helpers alike (telecom's
   * initialisation actions and assertions name helpers such as `set_data_usage`); returns its
   * Python result, then syncs the tools (as the reference's `run_env_function_call` does).
   * Throws for an unknown function.
   */
  runFunction(call: EnvFunctionCall): PyValue;
  /** `sync_tools` (telecom keeps the agent's and the user's views of the line in step) */
  syncTools(): void;
  /**
   * The database as `get_dict_hash` hashes it: `json.dumps(model_dump(), sort_keys=True,
   * default=str)` of that side's database, or null when the side has none. Two environments are
   * in the same state when these texts are equal.
   */
  dbText(side: Requestor): string | null;
}

/** A domain: its policy, its tasks and a fresh environment per episode. */
export interface Tau2Domain {
  readonly name: Tau2DomainName;
  readonly tasks: readonly Tau2Task[];
  /** a fresh environment on the domain's initial database (no task state applied yet) */
  makeEnvironment(): Tau2Environment;
}

/** How a domain module is loaded: the data root (the folder holding `data/tau2/...`) and the tool docs. */
export type Tau2DomainLoader = (root: string, docs: ToolDocs) => Tau2Domain;
