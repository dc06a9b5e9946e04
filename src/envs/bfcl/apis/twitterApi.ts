/**
 * TwitterAPI (`posting_api.py` in the reference): posting, retweeting, commenting and following.
 *
 * Arguments arrive as arbitrary Python values, so every operation whose outcome depends on their
 * type goes through the `py/ops` helpers; that way a wrong type fails with CPython's own text.
 */
import { AttributeError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import {
  add,
  contains,
  dictGetOr,
  dictValues,
  getItem,
  iterate,
  len,
  listFor,
  listRemove,
  setItem,
  strFor,
  toInt,
  truthy,
} from '../../py/ops.js';
import type { PyDict, PyList, PyValue } from '../../py/values.js';
import { dictOf, dictSet, pyEquals } from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

/** `DEFAULT_STATE` of the reference, built fresh for every load (the reference deep-copies it). */
function defaultState(): PyDict {
  return dictOf({
    username: 'john',
    password: 'john123',
    authenticated: false,
    tweets: new Map(),
    comments: new Map(),
    retweets: new Map(),
    following_list: ['alice', 'bob'],
    tweet_counter: 0n,
  });
}

// ---------------------------------------------------------------------------------------------
// Small Python builtins the shared py module does not provide.

/** Python's `str.lower()` (JavaScript applies the same Unicode case mappings). */
function lower(v: PyValue): string {
  return strFor(v, 'lower').toLowerCase();
}

const notFound = (tweetId: PyValue): PyDict => dictOf({ error: `Tweet with ID ${str(tweetId)} not found.` });

// ---------------------------------------------------------------------------------------------

export class TwitterApiInstance implements BfclApi {
  readonly className = 'TwitterAPI' as const;

  username: PyValue = null;
  password: PyValue = null;
  authenticated: PyValue = false;
  /** Tweet id (int after load) -> tweet dict. */
  tweets: PyDict = new Map();
  /** Keys from the scenario stay strings; `comment()` adds int keys (so `get_tweet_comments` misses the former). */
  comments: PyValue = new Map();
  retweets: PyValue = new Map();
  following_list: PyValue = [];
  tweet_counter: PyValue = 0n;

  /**
   * Quirk (twitter-006): `post_tweet(content, tags=[], mentions=[])` has mutable defaults. Every
   * tweet posted without `mentions` stores this same list, so `mention()` on one of them also
   * changes every other such tweet and every later default post. The reference shares it
   * process-wide; here it lives per instance so rollouts never leak into each other.
   */
  private readonly defaultTags: PyList = [];
  private readonly defaultMentions: PyList = [];

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const defaults = defaultState();
    const pick = (key: string): PyValue => (config.has(key) ? config.get(key)! : defaults.get(key)!);
    this.username = pick('username');
    this.password = pick('password');
    this.authenticated = pick('authenticated');
    // The reference turns the tweet keys into ints (`int(k)`); the other dicts keep their keys.
    const tweets = pick('tweets');
    if (!(tweets instanceof Map)) throw AttributeError_(tweets, 'items');
    this.tweets = new Map();
    for (const [k, v] of tweets) dictSet(this.tweets, toInt(k), v);
    this.comments = pick('comments');
    this.retweets = pick('retweets');
    this.following_list = pick('following_list');
    this.tweet_counter = pick('tweet_counter');
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['username', this.username],
      ['password', this.password],
      ['authenticated', this.authenticated],
      ['tweets', this.tweets],
      ['comments', this.comments],
      ['retweets', this.retweets],
      ['following_list', this.following_list],
      ['tweet_counter', this.tweet_counter],
    ]);
  }

  authenticateTwitter(username: PyValue, password: PyValue): PyValue {
    if (pyEquals(username, this.username) && pyEquals(password, this.password)) {
      this.authenticated = true;
      return dictOf({ authentication_status: true });
    }
    return dictOf({ authentication_status: false });
  }

  postingGetLoginStatus(): PyValue {
    return dictOf({ login_status: truthy(this.authenticated) });
  }

  postTweet(content: PyValue, tags: PyValue | undefined, mentions: PyValue | undefined): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before posting.' });
    }
    // Tags and mentions are stored as given (a string stays a string, twitter-005).
    const tweet = dictOf({
      id: this.tweet_counter,
      username: this.username,
      content,
      tags: tags === undefined ? this.defaultTags : tags,
      mentions: mentions === undefined ? this.defaultMentions : mentions,
    });
    setItem(this.tweets, this.tweet_counter, tweet);
    this.tweet_counter = add(this.tweet_counter, 1n);
    return tweet;
  }

  retweet(tweetId: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before retweeting.' });
    }
    // Dict membership: the string '0' does not find the int key 0 (twitter-010).
    if (!contains(this.tweets, tweetId)) return notFound(tweetId);
    if (!contains(this.retweets, this.username)) setItem(this.retweets, this.username, []);
    if (contains(getItem(this.retweets, this.username), tweetId)) {
      return dictOf({ retweet_status: 'Already retweeted' });
    }
    listFor(getItem(this.retweets, this.username), 'append').push(tweetId);
    return dictOf({ retweet_status: 'Successfully retweeted' });
  }

  comment(tweetId: PyValue, commentContent: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before commenting.' });
    }
    if (!contains(this.tweets, tweetId)) return notFound(tweetId);
    if (!contains(this.comments, tweetId)) setItem(this.comments, tweetId, []);
    listFor(getItem(this.comments, tweetId), 'append').push(
      dictOf({ username: this.username, content: commentContent }),
    );
    return dictOf({ comment_status: 'Comment added successfully' });
  }

  mention(tweetId: PyValue, mentionedUsernames: PyValue): PyValue {
    // No authentication check in the reference.
    if (!contains(this.tweets, tweetId)) return notFound(tweetId);
    const tweet = getItem(this.tweets, tweetId);
    // `tweet["mentions"].extend(names)`: the list is changed in place, which is what makes the
    // shared default list of `post_tweet` observable. Copy the items first: `x.extend(x)` doubles x.
    const target = listFor(getItem(tweet, 'mentions'), 'extend');
    target.push(...iterate(mentionedUsernames).slice());
    return dictOf({ mention_status: 'Users mentioned successfully' });
  }

  followUser(usernameToFollow: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before following.' });
    }
    if (contains(this.following_list, usernameToFollow)) return dictOf({ follow_status: false });
    listFor(this.following_list, 'append').push(usernameToFollow);
    return dictOf({ follow_status: true });
  }

  listAllFollowing(): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before listing following.' });
    }
    return dictOf({ following_list: this.following_list });
  }

  unfollowUser(usernameToUnfollow: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please authenticate before unfollowing.' });
    }
    if (!contains(this.following_list, usernameToUnfollow)) return dictOf({ unfollow_status: false });
    listRemove(this.following_list, usernameToUnfollow);
    return dictOf({ unfollow_status: true });
  }

  getTweet(tweetId: PyValue): PyValue {
    if (!contains(this.tweets, tweetId)) return notFound(tweetId);
    return getItem(this.tweets, tweetId);
  }

  /** Returns a list, so the result string is its Python repr. */
  getUserTweets(username: PyValue): PyValue {
    return dictValues(this.tweets).filter((tweet) => pyEquals(getItem(tweet, 'username'), username));
  }

  /** Substring of the content or exact tag, both case-insensitive; returns a list (repr). */
  searchTweets(keyword: PyValue): PyValue {
    // `keyword.lower()` sits inside the comprehension: with no tweets a non-str keyword passes.
    // Operands are evaluated left to right, so a bad keyword fails before a bad tweet field.
    return dictValues(this.tweets).filter((tweet) => {
      const needle = lower(keyword);
      if (lower(getItem(tweet, 'content')).includes(needle)) return true;
      return iterate(getItem(tweet, 'tags')).map(lower).includes(needle);
    });
  }

  getTweetComments(tweetId: PyValue): PyValue {
    if (!contains(this.tweets, tweetId)) return notFound(tweetId);
    return dictGetOr(this.comments, tweetId, []);
  }

  getUserStats(username: PyValue): PyValue {
    const tweetCount = dictValues(this.tweets).filter((tweet) =>
      pyEquals(getItem(tweet, 'username'), username),
    ).length;
    const followingCount = pyEquals(username, this.username) ? BigInt(len(this.following_list)) : 0n;
    const retweetCount = BigInt(len(dictGetOr(this.retweets, username, [])));
    return dictOf({
      tweet_count: BigInt(tweetCount),
      following_count: followingCount,
      retweet_count: retweetCount,
    });
  }
}

const a = (args: BoundArgs, i: number): PyValue => args[i] as PyValue;

export const twitterApi: ApiClass<TwitterApiInstance> = {
  className: 'TwitterAPI',
  stateless: false,
  create: () => new TwitterApiInstance(),
  methods: {
    authenticate_twitter: {
      params: [req('username'), req('password')],
      run: (self, args) => self.authenticateTwitter(a(args, 0), a(args, 1)),
    },
    posting_get_login_status: { params: [], run: (self) => self.postingGetLoginStatus() },
    post_tweet: {
      params: [req('content'), opt('tags'), opt('mentions')],
      run: (self, args) => self.postTweet(a(args, 0), args[1], args[2]),
    },
    retweet: { params: [req('tweet_id')], run: (self, args) => self.retweet(a(args, 0)) },
    comment: {
      params: [req('tweet_id'), req('comment_content')],
      run: (self, args) => self.comment(a(args, 0), a(args, 1)),
    },
    mention: {
      params: [req('tweet_id'), req('mentioned_usernames')],
      run: (self, args) => self.mention(a(args, 0), a(args, 1)),
    },
    follow_user: { params: [req('username_to_follow')], run: (self, args) => self.followUser(a(args, 0)) },
    list_all_following: { params: [], run: (self) => self.listAllFollowing() },
    unfollow_user: {
      params: [req('username_to_unfollow')],
      run: (self, args) => self.unfollowUser(a(args, 0)),
    },
    get_tweet: { params: [req('tweet_id')], run: (self, args) => self.getTweet(a(args, 0)) },
    get_user_tweets: { params: [req('username')], run: (self, args) => self.getUserTweets(a(args, 0)) },
    search_tweets: { params: [req('keyword')], run: (self, args) => self.searchTweets(a(args, 0)) },
    get_tweet_comments: {
      params: [req('tweet_id')],
      run: (self, args) => self.getTweetComments(a(args, 0)),
    },
    get_user_stats: { params: [req('username')], run: (self, args) => self.getUserStats(a(args, 0)) },
  },
};
