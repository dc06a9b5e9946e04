/** A zero-latency scripted model server in its own process (for bench/eval-throughput.ts). */
import { bfclPlayer } from '../test/support/bfclPlayer.js';
import { startFakeModelServer } from '../test/support/fakeModelServer.js';
import { sharedData } from '../test/support/golden.js';

const ids = process.argv.slice(2);
const data = sharedData();
const server = await startFakeModelServer(
  bfclPlayer(data, Object.fromEntries(ids.map((id) => [id, 'gt' as const])), 'native'),
);
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
