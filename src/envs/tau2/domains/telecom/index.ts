/** τ²-bench's telecom domain: the carrier's tools for the agent, the phone's tools for the user. */
export {
  loadTelecom,
  loadTelecomDomain,
  loadTelecomSmallTasks,
  makeTelecomEnvironment,
} from './environment.js';
