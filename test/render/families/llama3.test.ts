import { describeGoldens } from './check.js';

describeGoldens('llama3', { ownToolTurns: true });
