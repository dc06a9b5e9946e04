/**
 * The credential a request carries. Most services take the API key itself (`X-API-Key`); one whose
 * `client/config` sets `pjwt_auth_enabled` takes a short-lived JWT instead, which the key buys at
 * `POST /api/v1/auth/token` (`{}` -> `{"jwt": ...}`). The JWT is bought again before it expires
 * (its `exp` claim, read by parsing the token's payload), and once more when the service answers
 * 401 to it. The key itself may come from `TINKER_CREDENTIAL_CMD`, a command whose output is the
 * credential, as the SDK allows.
 */
import { execFileSync } from 'node:child_process';
import { TinkerError } from './errors.js';

/** what the transport asks for each request's key, and tells when the service refused one */
export interface Credential {
  key(): Promise<string | undefined>;
  /** a 401: buy a new credential if this kind can; false when it cannot (the 401 stands) */
  refresh(): Promise<boolean>;
}

export class StaticKey implements Credential {
  constructor(private readonly value: string | undefined) {}
  async key(): Promise<string | undefined> {
    return this.value;
  }
  async refresh(): Promise<boolean> {
    return false;
  }
}

/** the `exp` claim of a JWT in ms since the epoch, or undefined when it has none or is not a JWT */
export function jwtExpiryMs(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** a JWT is bought again this long before it expires (or at half its life, if that is shorter) */
const REFRESH_MARGIN_MS = 60_000;

export class JwtCredential implements Credential {
  private jwt: string | undefined;
  private refreshAt = 0;
  private buying: Promise<string> | undefined;

  /** `exchange` posts the key to auth/token and returns the JWT */
  constructor(
    private readonly exchange: () => Promise<string>,
    private readonly now: () => number = Date.now,
  ) {}

  async key(): Promise<string> {
    if (this.jwt !== undefined && this.now() < this.refreshAt) return this.jwt;
    return this.buy();
  }

  async refresh(): Promise<boolean> {
    await this.buy();
    return true;
  }

  /** one exchange at a time: requests that find the JWT stale together share it */
  private buy(): Promise<string> {
    this.buying ??= (async () => {
      try {
        const jwt = await this.exchange();
        const issued = this.now();
        const expires = jwtExpiryMs(jwt);
        this.jwt = jwt;
        this.refreshAt =
          expires === undefined
            ? Number.POSITIVE_INFINITY
            : Math.max(issued, expires - Math.min(REFRESH_MARGIN_MS, (expires - issued) / 2));
        return jwt;
      } finally {
        this.buying = undefined;
      }
    })();
    return this.buying;
  }
}

/** the output of `TINKER_CREDENTIAL_CMD` (run by the shell), trimmed; a failure says what ran */
export function credentialFromCommand(command: string): string {
  let out: string;
  try {
    out = execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new TinkerError(
      'usage',
      `TINKER_CREDENTIAL_CMD (${command}) failed: ${(e as Error).message.split('\n')[0]}; fix the command or set TINKER_API_KEY`,
    );
  }
  const key = out.trim();
  if (!key) throw new TinkerError('usage', `TINKER_CREDENTIAL_CMD (${command}) printed no credential`);
  return key;
}
