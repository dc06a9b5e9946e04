import { describe, expect, it } from 'vitest';
import type { ScenarioContext } from '../../src/envs/bfcl/apis/api.js';
import { type TwitterApiInstance, twitterApi } from '../../src/envs/bfcl/apis/twitterApi.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../src/envs/py/values.js';
import { toStateJson } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

const ctx: ScenarioContext = { longContext: false, constants: undefined };

function make(configJson = '{}'): TwitterApiInstance {
  const inst = twitterApi.create();
  inst.loadScenario(parsePyJson(configJson) as PyDict, ctx);
  return inst;
}

function call(inst: TwitterApiInstance, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(twitterApi, inst, name, ...args);
}

const SCENARIO = `{"username": "analyst_pro", "password": "pw", "authenticated": true,
  "tweets": {"0": {"id": 0, "username": "analyst_pro", "content": "Hello World", "tags": ["#Intro"], "mentions": []}},
  "comments": {"0": [{"username": "bob", "content": "hi"}]}, "tweet_counter": 1}`;

describe('TwitterAPI', () => {
  it('takes defaults for missing keys and turns tweet keys into ints', () => {
    const state = toStateJson(new Map(make(SCENARIO).publicState()) as PyDict);
    expect(Object.keys(state as object)).toEqual([
      'username',
      'password',
      'authenticated',
      'tweets',
      'comments',
      'retweets',
      'following_list',
      'tweet_counter',
    ]);
    const inst = make(SCENARIO);
    expect([...inst.tweets.keys()]).toEqual([0n]);
    expect(call(inst, 'list_all_following')).toBe('{"following_list": ["alice", "bob"]}');
    expect(call(inst, 'get_tweet', '0')).toBe('{"error": "Tweet with ID 0 not found."}');
  });

  it('misses scenario comments, whose keys stay strings', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'get_tweet_comments', 0n)).toBe('[]');
    call(inst, 'comment', 0n, 'mine');
    expect(call(inst, 'get_tweet_comments', 0n)).toBe("[{'username': 'analyst_pro', 'content': 'mine'}]");
    // The scenario's key '0' and the int key 0 from comment() are different dict keys.
    expect([...(inst.comments as PyDict).keys()]).toEqual(['0', 0n]);
  });

  it('shares the default mentions list between default posts of one instance (twitter-006)', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'post_tweet', 'first')).toBe(
      '{"id": 1, "username": "analyst_pro", "content": "first", "tags": [], "mentions": []}',
    );
    call(inst, 'mention', 1n, ['@carol']);
    expect(call(inst, 'post_tweet', 'second')).toBe(
      '{"id": 2, "username": "analyst_pro", "content": "second", "tags": [], "mentions": ["@carol"]}',
    );
    // Explicit lists are not affected, and another instance starts clean.
    expect(call(inst, 'post_tweet', 'third', [], [])).toContain('"mentions": []');
    expect(call(make(SCENARIO), 'post_tweet', 'fresh')).toContain('"mentions": []');
  });

  it('searches content and tags case-insensitively and fails like Python on bad types', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'search_tweets', '#intro')).toContain("'id': 0");
    expect(call(inst, 'search_tweets', 'WORLD')).toContain("'id': 0");
    expect(call(inst, 'search_tweets', 'nothing')).toBe('[]');
    expect(call(inst, 'search_tweets', 5n)).toBe(
      "Error during execution: 'int' object has no attribute 'lower'",
    );
    // The keyword is lowered inside the loop: with no tweets a bad keyword passes.
    expect(call(make(), 'search_tweets', 5n)).toBe('[]');
    expect(call(inst, 'retweet', ['x'])).toBe("Error during execution: unhashable type: 'list'");
  });

  it('counts following only for the own user', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'get_user_stats', 'analyst_pro')).toBe(
      '{"tweet_count": 1, "following_count": 2, "retweet_count": 0}',
    );
    call(inst, 'retweet', 0n);
    expect(call(inst, 'retweet', 0n)).toBe('{"retweet_status": "Already retweeted"}');
    expect(call(inst, 'get_user_stats', 'bob')).toBe(
      '{"tweet_count": 0, "following_count": 0, "retweet_count": 0}',
    );
  });
});
