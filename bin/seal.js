#!/usr/bin/env node
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
    console.error(
      'seal: the compiled code is missing. Run `npm ci` (or `npm run build`) in the seal folder first.',
    );
    process.exit(1);
  }
  throw err;
});
