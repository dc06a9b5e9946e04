/** Every family module, imported for its registration in index.ts. */
import './gpt-oss.js';
import './qwen3.js';
import './qwen3-5.js';
import './role-colon.js';
import './deepseek-v3.js';
import './llama3.js';
