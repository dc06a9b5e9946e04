/** Every family module, imported for its registration in index.ts. */
import './deepseek-v3.js';
import './gpt-oss.js';
import './kimi-k2.js';
import './llama3.js';
import './nemotron3.js';
import './qwen3.js';
import './qwen3-5.js';
import './role-colon.js';
