/** Once per test run, before any file: dist/ compiled from the sources, for the files that run `seal`. */
import { buildDist } from './cli.js';

export default async function setup(): Promise<void> {
  await buildDist();
}
