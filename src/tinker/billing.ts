/**
 * What the service bills: its usage route answers hourly rows (one per hour x usage type x base
 * model x session x user) for a window of whole UTC hours, at most 14 days long, with an estimated
 * gross USD cost where it can price the row (null where it cannot yet: the data lags real time by
 * up to a few hours). Only an organisation member with billing view access gets an answer.
 */
import { z } from 'zod';
import { parseJsonBody, type SendOptions, type TinkerTransport } from './http.js';
import { parseWire } from './schemas.js';

const HOUR_MS = 3_600_000;
/** the longest window the route takes */
export const MAX_BILLING_WINDOW_MS = 14 * 24 * HOUR_MS;

const Row = z
  .object({
    type: z.string().optional(),
    session_id: z.string().nullish(),
    estimated_cost_usd: z.number().nullish(),
    event_info: z.record(z.string(), z.unknown()).nullish(),
  })
  .loose();

export const BillingUsageSchema = z
  .object({ data: z.array(Row), cost_data_through: z.string().nullish() })
  .loose();

export interface BilledCost {
  /** the priced rows' estimated cost, USD */
  readonly costUsd: number;
  /** rows of the given sessions, and how many of them had no price yet */
  readonly rows: number;
  readonly unpriced: number;
  /** the window asked for (whole UTC hours) */
  readonly startingOn: string;
  readonly endingBefore: string;
}

/** [from, to) widened to whole UTC hours, and shortened from the start to the route's 14 days */
export function billingWindow(from: Date, to: Date): { startingOn: Date; endingBefore: Date; cut: boolean } {
  const endingBefore = new Date(Math.ceil(to.getTime() / HOUR_MS) * HOUR_MS);
  let startingOn = new Date(Math.floor(from.getTime() / HOUR_MS) * HOUR_MS);
  const cut = endingBefore.getTime() - startingOn.getTime() > MAX_BILLING_WINDOW_MS;
  if (cut) startingOn = new Date(endingBefore.getTime() - MAX_BILLING_WINDOW_MS);
  if (endingBefore.getTime() === startingOn.getTime())
    return { startingOn, endingBefore: new Date(startingOn.getTime() + HOUR_MS), cut };
  return { startingOn, endingBefore, cut };
}

/** a row's session, at its top level or inside its event_info */
const sessionOf = (row: z.infer<typeof Row>): string | undefined => {
  if (typeof row.session_id === 'string') return row.session_id;
  const inner = row.event_info?.session_id;
  return typeof inner === 'string' ? inner : undefined;
};

/** the billed cost of `sessions` over the window (whole hours around [from, to)) */
export async function billedCost(
  transport: TinkerTransport,
  sessions: ReadonlySet<string>,
  from: Date,
  to: Date,
  opts: SendOptions = {},
): Promise<BilledCost> {
  const w = billingWindow(from, to);
  const q = new URLSearchParams({
    starting_on: w.startingOn.toISOString().replace('.000Z', 'Z'),
    ending_before: w.endingBefore.toISOString().replace('.000Z', 'Z'),
  });
  const route = `billing/usage/events?${q}`;
  const answer = await transport.send('GET', route, undefined, { what: 'billing usage', ...opts });
  const usage = parseWire(BillingUsageSchema, parseJsonBody(answer, 'billing usage'), 'billing usage');
  const ours = usage.data.filter((r) => {
    const s = sessionOf(r);
    return s !== undefined && sessions.has(s);
  });
  const priced = ours.filter((r) => typeof r.estimated_cost_usd === 'number');
  return {
    costUsd: priced.reduce((n, r) => n + (r.estimated_cost_usd as number), 0),
    rows: ours.length,
    unpriced: ours.length - priced.length,
    startingOn: q.get('starting_on')!,
    endingBefore: q.get('ending_before')!,
  };
}
