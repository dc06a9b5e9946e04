/** Every family module, imported for its registration in index.ts. */
import './role-colon.js';
import './deepseek-v3.js';
import './llama3.js';
