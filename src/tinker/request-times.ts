/**
 * Where a Tinker run's time goes, per request kind (route): how many were made, their wall time
 * from the call to the result, and the part of it after the service accepted the request (its
 * queue, the clock cycle it waited for, and the work itself; on a clocked service mostly the wait).
 */
export interface RouteTime {
  readonly count: number;
  readonly ms: number;
  readonly afterAcceptMs: number;
}

export type RouteTimes = Readonly<Record<string, RouteTime>>;

export class RequestTimes {
  private readonly routes = new Map<string, { count: number; ms: number; afterAcceptMs: number }>();

  add(route: string, ms: number, afterAcceptMs: number): void {
    const t = this.routes.get(route) ?? { count: 0, ms: 0, afterAcceptMs: 0 };
    t.count++;
    t.ms += ms;
    t.afterAcceptMs += afterAcceptMs;
    this.routes.set(route, t);
  }

  snapshot(): RouteTimes {
    return Object.fromEntries([...this.routes].map(([k, v]) => [k, { ...v }]));
  }
}
