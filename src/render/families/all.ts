/** Every family module, imported for its registration in index.ts. */
import './role-colon.js';
import './kimi-k2.js';
import './nemotron3.js';
