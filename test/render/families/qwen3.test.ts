import { describeGoldens } from './check.js';

describeGoldens('qwen3');
describeGoldens('qwen3_disable_thinking');
describeGoldens('qwen3_instruct');
