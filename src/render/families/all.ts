/** Every family module, imported for its registration in index.ts. */
import './role-colon.js';
import './gpt-oss.js';
