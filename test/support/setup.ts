/**
 * Property tests explore new random cases on every local run, but CI replays a fixed seed so a
 * rare counterexample cannot turn a submission red by chance. Set FC_SEED to reproduce a failure.
 */
import fc from 'fast-check';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : process.env.CI ? 20261129 : undefined;
if (seed !== undefined) fc.configureGlobal({ seed });
