import { describe } from 'vitest';
import { describeGoldens } from './check.js';

describeGoldens('nemotron3');
describeGoldens('nemotron3_disable_thinking');
describe('nemotron', () => {});
