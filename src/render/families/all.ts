/** Every family module, imported for its registration in index.ts. */
import './role-colon.js';
import './qwen3.js';
import './qwen3-5.js';
