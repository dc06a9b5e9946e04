import { describe } from 'vitest';
import { describeGoldens } from './check.js';

describeGoldens('kimi_k2');
describeGoldens('kimi_k25');
describeGoldens('kimi_k25_disable_thinking');
describe('kimi', () => {});
