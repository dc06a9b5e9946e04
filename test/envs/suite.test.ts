/**
 * The one episode interface carries BFCL too: the mini suite's tasks played through
 * `BfclSuiteEpisode` by the generic agent loop, with a model that answers each turn with that
 * turn's ground truth over a real socket, score what the ground truth scores (every task solved),
 * and the recorded calls are the ground truth's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callParts, converse } from '../../src/agent/conversation.js';
import { formatAdapter } from '../../src/agent/formats/index.js';
import { ADDITIONAL_FUNCTION_MESSAGE } from '../../src/envs/bfcl/episode.js';
import { bfclSuite } from '../../src/envs/bfcl/suite.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { jsonDumps } from '../../src/envs/py/format.js';
import { OpenAiCompatiblePolicy } from '../../src/policy/openai.js';
import { bfclPlayer } from '../support/bfclPlayer.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fakeModelServer.js';

const mini = loadMiniSuite();
const ids = mini.split.test.slice(0, 40);
let server: FakeModelServer;
/** the task being played (tasks are played one at a time; several share a first message) */
let current = mini.byId.get(ids[0]!)!;

beforeAll(async () => {
  // the turn is told by the user messages so far
  server = await startFakeModelServer((body) => {
    const msgs = body.messages ?? [];
    const task = current;
    if (msgs.at(-1)?.role === 'tool') return { content: 'done' };
    const turn = msgs.filter((m) => m.role === 'user').length - 1;
    const calls = task.groundTruth[turn] ?? [];
    if (calls.length === 0) return { content: 'nothing to do' };
    return {
      toolCalls: calls.map((c, i) => {
        const { name, arguments: args } = callParts(c);
        return { id: `c${i}`, name, arguments: jsonDumps(args) };
      }),
    };
  });
});
afterAll(() => server.close());

describe('BFCL behind the suite interface', () => {
  it('plays the ground truth through the generic loop and scores every task as solved', async () => {
    const suite = bfclSuite(mini, new Set(ids));
    expect(suite.tasks).toHaveLength(ids.length);
    const policy = new OpenAiCompatiblePolicy({ baseUrl: server.url, model: 'gt', apiKey: 'x' });
    const unsolved: string[] = [];
    for (const id of ids) {
      current = mini.byId.get(id)!;
      const episode = suite.episode(id, {});
      const played = await converse(episode, policy, { format: formatAdapter('native') });
      expect(played.reason).toBe('finished');
      const verdict = episode.verdict();
      if (!verdict.solved) unsolved.push(id);
      const task = mini.byId.get(id)!;
      const record = episode.record() as string[][][];
      expect(record.map((turn) => turn.flat().length)).toEqual(task.groundTruth.map((t) => t.length));
    }
    expect(unsolved).toEqual([]);
  });

  it("a prompting format is shown the tools a turn reveals, in that turn's message, and solves the task with them", async () => {
    const revealing = mini.split.test.filter((id) => mini.byId.get(id)!.missedFunction).slice(0, 5);
    expect(revealing.length).toBeGreaterThan(0);
    const server = await startFakeModelServer(
      bfclPlayer(mini, Object.fromEntries(revealing.map((id) => [id, 'gt' as const])), 'python'),
    );
    try {
      const suite = bfclSuite(mini, new Set(revealing));
      const policy = new OpenAiCompatiblePolicy({ baseUrl: server.url, model: 'gt', apiKey: 'x' });
      for (const id of revealing) {
        const task = mini.byId.get(id)!;
        const episode = suite.episode(id, {});
        const played = await converse(episode, policy, { format: formatAdapter('python') });
        expect(episode.verdict().solved).toBe(true);
        const held = task.missedFunction!.names.map((n) => mini.docs.get(n)!.doc.name);
        // the reveal turn's user message: the held-out tools as the format lists them, then BFCL's sentence
        const reveals = played.messages.filter(
          (m) => m.role === 'user' && String(m.content).endsWith(`\n${ADDITIONAL_FUNCTION_MESSAGE}`),
        );
        expect(reveals).toHaveLength(1);
        const reveal = reveals[0]!;
        for (const name of held) {
          expect(String(reveal.content)).toContain(`"name": "${name}"`);
          expect(String(played.messages[0]!.content)).not.toContain(`"name": "${name}"`);
        }
      }
    } finally {
      await server.close();
    }
  });

  it('groups tasks by category, in the order the data lists them', () => {
    const suite = bfclSuite(mini);
    expect(suite.groups.length).toBeGreaterThan(1);
    expect(new Set(suite.tasks.map((t) => t.group))).toEqual(new Set(suite.groups));
  });
});
