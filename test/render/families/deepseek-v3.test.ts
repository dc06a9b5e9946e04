import { describeGoldens } from './check.js';

describeGoldens('deepseekv3');
describeGoldens('deepseekv3_thinking');
