import { describeGoldens } from './check.js';

describeGoldens('qwen3_5');
describeGoldens('qwen3_5_disable_thinking');
