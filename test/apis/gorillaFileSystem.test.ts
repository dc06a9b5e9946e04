// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { GorillaFileSystem, gorillaFileSystem } from '../../src/envs/bfcl/apis/gorillaFileSystem.js';
import { TaskEnvironment } from '../../src/envs/bfcl/executor.js';
import { stateHash, stateSnapshot } from '../../src/envs/bfcl/state.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import { type PyDict, PyTuple, type PyValue, pyEquals } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';
import { type GoldenTrace, readJsonl, sharedData } from '../support/golden.js';

// A small tree like multi_turn_base_1's: alex/workspace/{log.txt, archive/, .hidden_file}.
const CONFIG = `{"root": {"alex": {"type": "directory", "contents": {"workspace": {"type": "directory", "contents": {
  "log.txt": {"type": "file", "content": "line one\\nline two\\nthird"},
  "archive": {"type": "directory", "contents": {}},
  ".hidden_file": {"type": "file", "content": "secret"}}}}}}}`;

function fresh(config = CONFIG): GorillaFileSystem {
  const fs = new GorillaFileSystem();
  fs.loadScenario(parsePyJson(config) as PyDict, { longContext: false, constants: undefined });
  return fs;
}

function call(fs: GorillaFileSystem, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(gorillaFileSystem, fs, name, ...args);
}

describe('GorillaFileSystem basics', () => {
  it('pwd includes the root name; a default root "/" prints "//"', () => {
    const fs = fresh();
    expect(call(fs, 'pwd')).toBe('{"current_working_directory": "/alex"}');
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'pwd')).toBe('{"current_working_directory": "/alex/workspace"}');
    expect(call(fresh('{}'), 'pwd')).toBe('{"current_working_directory": "//"}');
  });

  it('ls hides dot names unless a is truthy', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'ls')).toBe('{"current_directory_content": ["log.txt", "archive"]}');
    expect(call(fs, 'ls', 'yes')).toBe(
      '{"current_directory_content": ["log.txt", "archive", ".hidden_file"]}',
    );
  });

  it('cd: trailing slashes, nested paths, .. at the root', () => {
    const fs = fresh();
    expect(call(fs, 'cd', '..')).toBe('{"error": "Current directory is already the root. Cannot go back."}');
    expect(call(fs, 'cd', 'workspace/')).toBe('{"current_working_directory": "workspace"}');
    expect(call(fs, 'cd', '../')).toBe('{}');
    expect(call(fs, 'cd', 'a/b')).toBe(
      '{"error": "cd: a/b: Unsupported path. Only one folder level at a time is supported."}',
    );
    expect(call(fs, 'cd', 'nope')).toBe('{"error": "cd: \'nope\': No such file or directory"}');
    expect(call(fs, 'cd', '//')).toBe('{"current_working_directory": "alex"}');
  });

  it('raises CPython errors for wrong argument types', () => {
    const fs = fresh();
    expect(call(fs, 'cd', 5n)).toBe("Error during execution: 'int' object has no attribute 'rstrip'");
    expect(call(fs, 'mkdir', null)).toBe(
      "Error during execution: argument of type 'NoneType' is not iterable",
    );
    expect(call(fs, 'mkdir', ['x'])).toBe("Error during execution: unhashable type: 'list'");
    expect(call(fs, 'find', null)).toBe(
      "Error during execution: 'NoneType' object has no attribute 'rstrip'",
    );
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'grep', 'log.txt', 1n)).toBe(
      "Error during execution: 'in <string>' requires string as left operand, not int",
    );
    expect(call(fs, 'tail', 'log.txt', 'x')).toBe(
      "Error during execution: '>' not supported between instances of 'str' and 'int'",
    );
  });

  it('a tuple is a valid (hashable, iterable) name, as in Python', () => {
    const fs = fresh();
    expect(call(fs, 'mkdir', new PyTuple(['t']))).toBe('None');
    expect(call(fs, 'find', '.', 't')).toBe('{"matches": ["./workspace/log.txt", "./(\'t\',)"]}');
  });

  it('echo writes existing files only and prints otherwise', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'echo', 'hi')).toBe('{"terminal_output": "hi"}');
    expect(call(fs, 'echo', 'hi', '')).toBe('{"terminal_output": "hi"}');
    expect(call(fs, 'echo', 'hi', 'new.txt')).toBe(
      '{"error": "echo: cannot write to \'new.txt\': No such file"}',
    );
    expect(call(fs, 'echo', 'a b\nc', 'log.txt')).toBe('None');
    expect(call(fs, 'cat', 'log.txt')).toBe('{"file_content": "a b\\nc"}');
    // Quirk: a directory name reaches File._write.
    expect(call(fs, 'echo', 'x', 'archive')).toBe(
      "Error during execution: 'Directory' object has no attribute '_write'",
    );
    // Non-str content is stored as is; wc 'c' then counts list items, 'l' raises.
    call(fs, 'echo', ['a', 'b'], 'log.txt');
    expect(call(fs, 'wc', 'log.txt', 'c')).toBe('{"count": 2, "type": "characters"}');
    expect(call(fs, 'wc', 'log.txt', 'l')).toBe(
      "Error during execution: 'list' object has no attribute 'splitlines'",
    );
  });

  it('wc, sort, grep, diff, du follow Python string semantics', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    call(fs, 'touch', 'b.txt');
    call(fs, 'echo', 'pear\r\nApple\x0bfig  \u3000 kiwi\n', 'b.txt');
    expect(call(fs, 'wc', 'b.txt')).toBe('{"count": 3, "type": "lines"}');
    expect(call(fs, 'wc', 'b.txt', 'w')).toBe('{"count": 4, "type": "words"}');
    expect(call(fs, 'wc', 'b.txt', 'c')).toBe('{"count": 24, "type": "characters"}');
    expect(call(fs, 'wc', 'b.txt', 'x')).toBe('{"error": "wc: invalid mode \'x\'"}');
    expect(call(fs, 'sort', 'b.txt')).toBe('{"sorted_content": "Apple\\nfig  \\u3000 kiwi\\npear"}');
    expect(call(fs, 'grep', 'b.txt', 'p')).toBe('{"matching_lines": ["pear", "Apple"]}');
    expect(call(fs, 'diff', 'log.txt', 'b.txt')).toBe(
      '{"diff_lines": "- line one\\n+ pear\\n- line two\\n+ Apple\\n- third\\n+ fig  \\u3000 kiwi"}',
    );
    expect(call(fs, 'du')).toBe('{"disk_usage": "55 bytes"}');
    expect(call(fs, 'du', true)).toBe('{"disk_usage": "55.00 B"}');
  });

  it('sorts by code point, not UTF-16 unit', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    call(fs, 'echo', '\uff01\n\u{1f600}', 'log.txt');
    expect(call(fs, 'sort', 'log.txt')).toBe('{"sorted_content": "\\uff01\\n\\ud83d\\ude00"}');
  });

  it("tail's odd counts (Quirk)", () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'tail', 'log.txt', 1n)).toBe('{"last_lines": "third"}');
    expect(call(fs, 'tail', 'log.txt', 0n)).toBe('{"last_lines": "line one\\nline two\\nthird"}');
    expect(call(fs, 'tail', 'log.txt', -1n)).toBe('{"last_lines": "line two\\nthird"}');
    expect(call(fs, 'tail', 'log.txt', true)).toBe('{"last_lines": "third"}');
    expect(call(fs, 'tail', 'log.txt', 7.5)).toBe('{"last_lines": "line one\\nline two\\nthird"}');
    expect(call(fs, 'tail', 'log.txt', 1.5)).toBe(
      'Error during execution: slice indices must be integers or None or have an __index__ method',
    );
  });

  it('find walks depth first and rewrites the cd: error', () => {
    const fs = fresh();
    expect(call(fs, 'find')).toBe(
      '{"matches": ["./workspace", "./workspace/log.txt", "./workspace/archive", "./workspace/.hidden_file"]}',
    );
    expect(call(fs, 'find', '/workspace//', 'i')).toBe(
      '{"matches": ["/workspace/archive", "/workspace/.hidden_file"]}',
    );
    expect(call(fs, 'find', 'workspace/..')).toBe(
      '{"error": "find: \'workspace/..\': No such file or directory"}',
    );
  });
});

describe('GorillaFileSystem mv/cp/rm quirks', () => {
  it("mv of a directory leaves the children's parent links stale (Quirk)", () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    call(fs, 'mkdir', 'sub');
    call(fs, 'cd', 'sub');
    call(fs, 'mkdir', 'inner');
    call(fs, 'cd', '..');
    expect(call(fs, 'mv', 'sub', 'archive')).toBe('{"result": "\'sub\' moved to \'archive/sub\'"}');
    call(fs, 'cd', 'archive');
    call(fs, 'cd', 'sub');
    call(fs, 'cd', 'inner');
    call(fs, 'cd', '..');
    // The old `sub` object is detached but its parent is still workspace.
    expect(call(fs, 'pwd')).toBe('{"current_working_directory": "/alex/workspace/sub"}');
  });

  it('mv errors and rename', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'mv', 'log.txt', '.hidden_file')).toBe(
      '{"error": "mv: cannot move \'log.txt\' to \'.hidden_file\': Not a directory"}',
    );
    expect(call(fs, 'mv', 'log.txt', 'a/b')).toBe(
      '{"error": "mv: path not allowed in destination. Provide only a file or directory name."}',
    );
    expect(call(fs, 'mv', 'log.txt', 5n)).toBe(
      "Error during execution: argument of type 'int' is not iterable",
    );
    expect(call(fs, 'mv', 'log.txt', 'new.txt')).toBe('{"result": "\'log.txt\' moved to \'new.txt\'"}');
    expect(call(fs, 'ls', true)).toBe(
      '{"current_directory_content": ["archive", ".hidden_file", "new.txt"]}',
    );
  });

  it('cp into a directory that holds the name raises the inner ValueError (Quirk)', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'cp', 'log.txt', 'archive')).toBe(
      '{"result": "\'log.txt\' copied to \'archive/log.txt\'"}',
    );
    expect(call(fs, 'cp', 'log.txt', 'archive')).toBe(
      "Error during execution: File 'log.txt' already exists in directory 'archive'.",
    );
  });

  it('cp of a directory is shallow: file objects are shared (Quirk)', () => {
    const fs = fresh();
    expect(call(fs, 'cp', 'workspace', 'copy')).toBe('{"result": "\'workspace\' copied to \'copy\'"}');
    call(fs, 'cd', 'copy');
    call(fs, 'echo', 'CHANGED', 'log.txt');
    call(fs, 'touch', 'only_in_copy');
    call(fs, 'cd', '..');
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'cat', 'log.txt')).toBe('{"file_content": "CHANGED"}');
    expect(call(fs, 'ls')).toBe('{"current_directory_content": ["log.txt", "archive"]}');
  });

  it('rm removes non-empty directories; rmdir only empty ones', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'rmdir', 'log.txt')).toBe(
      '{"error": "rmdir: cannot remove \'log.txt\': Not a directory"}',
    );
    call(fs, 'touch', 'x');
    call(fs, 'mv', 'x', 'archive');
    expect(call(fs, 'rmdir', 'archive')).toBe(
      '{"error": "rmdir: cannot remove \'archive\': Directory not empty"}',
    );
    expect(call(fs, 'rm', 'archive')).toBe('{"result": "\'archive\' removed"}');
    expect(call(fs, 'rm', 'archive')).toBe(
      '{"error": "rm: cannot remove \'archive\': No such file or directory"}',
    );
  });

  it('copying a directory into itself makes a cycle; the state form stays finite', () => {
    const fs = fresh();
    call(fs, 'cd', 'workspace');
    expect(call(fs, 'cp', 'archive', 'archive')).toBe(
      '{"result": "\'archive\' copied to \'archive/archive\'"}',
    );
    const root = fs.root.toStateJson();
    expect(JSON.stringify(root)).toContain('"contents":"{...}"');
  });

  it('state equality ignores parent links and compares names and contents', () => {
    const a = fresh();
    const b = fresh();
    expect(pyEquals(a.root, b.root)).toBe(true);
    call(b, 'cd', 'workspace');
    call(b, 'echo', 'changed', 'log.txt');
    expect(pyEquals(a.root, b.root)).toBe(false);
    expect(a.publicState().get('root')).not.toBe(undefined);
    expect([...a.publicState().keys()]).toEqual(['long_context', 'root']);
  });
});

/**
 * Replay every golden trace that involves the file system with only a GorillaFileSystem
 * instance, so the check does not depend on the other classes' ports. Other classes' calls are
 * skipped: they never touch the file system's state.
 */
describe('GorillaFileSystem against the golden traces (file-system calls only)', () => {
  const traces = readJsonl<GoldenTrace>('golden_traces.jsonl').filter((t) =>
    t.involved_classes.includes('GorillaFileSystem'),
  );
  const methodName = (c: string) => /^\s*([A-Za-z_]\w*)\s*\(/.exec(c)?.[1] ?? '';

  it('has 200 traces', () => expect(traces.length).toBe(200));

  for (const trace of traces) {
    it(trace.id, () => {
      const data = sharedData();
      const task = data.byId.get(trace.id)!;
      const env = new TaskEnvironment({
        taskId: trace.id,
        involvedClasses: ['GorillaFileSystem'],
        initialConfig: task.initialConfig,
        longContext: trace.long_context,
        ...(trace.long_context ? { constants: data.longContextConstants() } : {}),
      });
      const hash = () => stateHash(stateSnapshot(env).GorillaFileSystem!);
      expect(hash()).toBe(trace.initial_state_sha256.GorillaFileSystem);
      for (const turn of trace.turns) {
        for (const c of turn.calls) {
          if (!(methodName(c.call) in gorillaFileSystem.methods)) continue;
          expect(env.execute(c.call), `${c.call}`).toBe(c.result);
        }
        expect(hash(), `state after turn ${turn.turn}`).toBe(turn.state_sha256.GorillaFileSystem);
      }
    });
  }
});
