/**
 * `seal eval --suite bfcl --categories memory_kv,...`: BFCL v4's agentic categories (memory with
 * its three backends, web search with and without snippets) played through the one episode
 * interface, prerequisite conversations included, and scored by the reference's agentic checker.
 * The run folder is the episodes' (eval/episodes.ts) plus the reference's result files, one per
 * category, which `seal verify` and the reference's checker read.
 */
import { join, resolve } from 'node:path';
import { formatAdapter } from '../agent/formats/index.js';
import {
  AGENTIC_CATEGORIES,
  type AgenticCategory,
  MEMORY_CATEGORIES,
  WEB_SEARCH_CATEGORIES,
} from '../envs/bfcl/agentic/data.js';
import { ServerEmbedder } from '../envs/bfcl/agentic/embeddings.js';
import type { AgenticRecord } from '../envs/bfcl/agentic/episode.js';
import { agenticSuite } from '../envs/bfcl/agentic/suite.js';
import { SERPAPI_KEY_ENV, Web } from '../envs/bfcl/agentic/web.js';
import { configureVectorEmbedder } from '../envs/bfcl/apis/memoryVector.js';
import { configureWebSearch } from '../envs/bfcl/apis/webSearch.js';
import { resolveDataDir } from '../envs/bfcl/data/locate.js';
import { CATEGORIES, type Category } from '../envs/bfcl/data/tasks.js';
import type { EvalConfig } from '../eval/config.js';
import { type EpisodeEvalConfig, type EpisodeRow, runEpisodes } from '../eval/episodes.js';
import { UsageError } from '../util/errors.js';
import { writeJsonLines } from '../util/files.js';
import { chooseEvalPolicy, policyRecord } from './eval-policy.js';
import { commaList, parseUrlFlag } from './flags.js';
import { progressBar } from './progress.js';

/** What `--categories` names: multi-turn categories, or agentic ones (never both in one run). */
export type CategoryChoice =
  | { readonly kind: 'multi_turn'; readonly categories: readonly Category[] }
  | { readonly kind: 'agentic'; readonly categories: readonly AgenticCategory[] };

const AGENTIC_GROUPS: Readonly<Record<string, readonly AgenticCategory[]>> = {
  agentic: AGENTIC_CATEGORIES,
  memory: MEMORY_CATEGORIES,
  web_search: WEB_SEARCH_CATEGORIES,
};

export function parseCategories(spec: string): CategoryChoice {
  const names = commaList(spec);
  const multi = new Set<Category>();
  const agentic = new Set<AgenticCategory>();
  for (const name of names) {
    const bare = name.replace(/^multi_turn_/, '');
    if ((CATEGORIES as readonly string[]).includes(bare)) multi.add(bare as Category);
    else if ((AGENTIC_CATEGORIES as readonly string[]).includes(name)) agentic.add(name as AgenticCategory);
    else if (AGENTIC_GROUPS[name]) for (const c of AGENTIC_GROUPS[name]) agentic.add(c);
    else
      throw new UsageError(
        `--categories: unknown category ${name}. Multi-turn: ${CATEGORIES.join(', ')} (or multi_turn_base, ...); agentic: ${AGENTIC_CATEGORIES.join(', ')}, or memory, web_search, agentic.`,
      );
  }
  if (multi.size === 0 && agentic.size === 0)
    throw new UsageError('--categories names no category; e.g. --categories memory_kv,web_search_base.');
  if (multi.size > 0 && agentic.size > 0)
    throw new UsageError(
      '--categories mixes multi-turn and agentic categories: their run folders differ, so evaluate each in its own run (its own --out).',
    );
  return multi.size > 0
    ? { kind: 'multi_turn', categories: CATEGORIES.filter((c) => multi.has(c)) }
    : { kind: 'agentic', categories: AGENTIC_CATEGORIES.filter((c) => agentic.has(c)) };
}

/** Flags that only the agentic categories read, refused elsewhere so that nobody believes they did something. */
export function refuseAgenticFlags(flags: EvalConfig, where: string): void {
  const given = (
    [
      ['--embeddings-url', flags.embeddingsUrl],
      ['--search-url', flags.searchUrl],
      ['--web-cache', flags.webCache],
      ['--web-offline', flags.webOffline],
    ] as const
  ).filter(([, v]) => v !== undefined);
  if (given.length > 0)
    throw new UsageError(
      `${given.map(([f]) => f).join(', ')}: for BFCL v4's memory and web search categories (--categories), not ${where}.`,
    );
}

/** The flags that are τ²'s alone. */
function refuseOtherFlags(flags: EvalConfig): void {
  if (flags.trials !== 1)
    throw new UsageError('--trials is for tau2; an agentic category is played once per entry, as BFCL does.');
  if (flags.suite !== 'bfcl')
    throw new UsageError('the agentic categories are BFCL v4 data: give --suite bfcl with --categories.');
  if (flags.split !== 'test' && flags.split !== 'all' && !flags.split.includes('_'))
    throw new UsageError(
      `--split ${flags.split}: the agentic categories have one set of entries; use test (or all), or entry ids such as memory_kv_0-customer-0.`,
    );
}

/** The reference's result file of a category: its entries (prerequisites first) as `{id, result}` lines. */
export function agenticResultFile(category: AgenticCategory): string {
  return `BFCL_v4_${category}_result.json`;
}

function writeResultFiles(rows: readonly EpisodeRow[], dir: string, categories: readonly AgenticCategory[]) {
  for (const category of categories) {
    const mine = rows.filter((r) => r.group === category);
    if (mine.length === 0) continue;
    writeJsonLines(
      join(dir, agenticResultFile(category)),
      mine.map((r) => {
        const rec = r.record as AgenticRecord;
        return { id: rec.id, result: rec.result };
      }),
    );
  }
}

export async function runAgenticEvalCommand(
  flags: EvalConfig,
  categories: readonly AgenticCategory[],
  print: (s: string) => void,
): Promise<void> {
  refuseOtherFlags(flags);
  const dataDir = resolveDataDir(flags.dataDir);
  const suite = agenticSuite(dataDir, categories);
  let ids = suite.tasks.map((t) => t.id);
  if (flags.split !== 'test' && flags.split !== 'all') {
    const wanted = commaList(flags.split);
    const known = new Set(ids);
    const bad = wanted.filter((id) => !known.has(id));
    if (bad.length > 0)
      throw new UsageError(
        `--split: no entry ${bad.slice(0, 3).join(', ')} in ${categories.join(', ')}; ids look like memory_kv_0-customer-0 or web_search_base_3.`,
      );
    ids = wanted;
  }
  const usesVector = categories.includes('memory_vector');
  const usesWeb = categories.some((c) => c.startsWith('web_search'));
  let embedder: ServerEmbedder | undefined;
  let web: Web | undefined;
  if (usesVector) {
    if (!flags.embeddingsUrl)
      throw new UsageError(
        "memory_vector needs sentence embeddings: give --embeddings-url URL, an OpenAI-compatible /v1/embeddings server (serve all-MiniLM-L6-v2 for the reference's vectors, e.g. with Hugging Face text-embeddings-inference or vLLM).",
      );
    parseUrlFlag('--embeddings-url', flags.embeddingsUrl, 'http://127.0.0.1:8080/v1');
    embedder = new ServerEmbedder({ baseUrl: flags.embeddingsUrl, model: flags.embeddingsModel });
    configureVectorEmbedder(embedder);
  }
  const cacheDir = resolve(flags.webCache ?? join(flags.out, 'web-cache'));
  if (usesWeb) {
    const apiKey = process.env[SERPAPI_KEY_ENV];
    if (!apiKey && !flags.webOffline)
      throw new UsageError(
        `web search asks a search provider (SerpAPI, as the reference does): set ${SERPAPI_KEY_ENV}, or repeat a recorded run from its cache with --web-offline (and --web-cache DIR).`,
      );
    if (flags.searchUrl) parseUrlFlag('--search-url', flags.searchUrl, 'https://serpapi.com');
    web = new Web({
      cacheDir,
      ...(apiKey ? { apiKey } : {}),
      ...(flags.searchUrl ? { searchUrl: flags.searchUrl } : {}),
      ...(flags.webOffline ? { offline: true } : {}),
    });
    configureWebSearch(web);
  }
  const chosen = await chooseEvalPolicy(flags, flags.concurrency);
  try {
    const config: EpisodeEvalConfig = {
      suite: 'bfcl-agentic',
      ...policyRecord(flags, chosen),
      groups: categories,
      split: flags.split,
      trials: 1,
      seed: flags.seed ?? 0,
      ...(usesVector ? { counterpart: { embeddingsModel: flags.embeddingsModel } } : {}),
    };
    const outcome = await runEpisodes(suite, ids, chosen.policy, config, flags.out, {
      concurrency: flags.concurrency,
      format: formatAdapter(chosen.format),
      progress: progressBar('eval'),
      seeds: [config.seed],
      writeRecords: (rows, dir) => writeResultFiles(rows, dir, categories),
      ...(flags.force ? { force: true } : {}),
    });
    print(outcome.table);
    if (web) {
      const c = web.counts;
      print(
        `\nweb: ${c.hits} answer(s) from the cache, ${c.fetched} fetched${c.misses ? `, ${c.misses} not in the cache (offline)` : ''}; cache ${cacheDir}`,
      );
    }
    print(
      `\n${outcome.ran} entr${outcome.ran === 1 ? 'y' : 'ies'} run, ${outcome.resumed} kept from before; results in ${flags.out}`,
    );
  } finally {
    configureVectorEmbedder(undefined);
    configureWebSearch(undefined);
    await embedder?.close();
    web?.close();
    if ('close' in chosen) await chosen.close();
  }
}
