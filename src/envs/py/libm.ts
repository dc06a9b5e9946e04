/**
 * The C math library as CPython sees it on the reference machine (glibc 2.36, x86-64 with FMA),
 * computed bit for bit on bigints, and the IEEE-754 double helpers that needs.
 *
 * - `pow`: glibc's pow. Python's `float ** float` hands the work to C pow, and JavaScript's `**`
 *   gives different last digits (`10 ** -5` is 9.999999999999999e-06 in V8, 1e-05 in CPython).
 * - `correctlyRoundedCosSin`: stands in for glibc's cos/sin in complex pow.
 * - bit-level helpers shared with the operators and the mpmath/decimal ports: `bitLength`,
 *   `floatParts` (a double as man * 2^exp), `nearestDouble` and `ratioToDouble` (an exact binary
 *   value or a quotient of integers rounded once to a double).
 * - fixed-point series for ln, ln 2 and pi, which the tables below and the mpmath port are built on.
 */

// =============================================================================================
// Doubles at bit level.

const U64 = (1n << 64n) - 1n;
const BITS = new DataView(new ArrayBuffer(8));

function asDouble(bits: bigint): number {
  BITS.setBigUint64(0, bits & U64);
  return BITS.getFloat64(0);
}

function asBits(x: number): bigint {
  BITS.setFloat64(0, x);
  return BITS.getBigUint64(0);
}

/** The number of bits of |n| (0 for 0). */
export function bitLength(n: bigint): number {
  const m = n < 0n ? -n : n;
  if (m === 0n) return 0;
  const hex = m.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0]!, 16)));
}

/** The number of trailing zero bits of n != 0. */
export function trailingZeros(n: bigint): number {
  return bitLength(n & -n) - 1;
}

/** A finite double as exactly man * 2^exp, with man odd and signed like x (0n and 0 for ±0). */
export function floatParts(x: number): { man: bigint; exp: number } {
  const bits = asBits(Math.abs(x));
  const biased = Number(bits >> 52n);
  const frac = bits & ((1n << 52n) - 1n);
  let man = biased === 0 ? frac : frac | (1n << 52n);
  let exp = biased === 0 ? -1074 : biased - 1075;
  if (man === 0n) return { man: 0n, exp: 0 };
  const tz = trailingZeros(man);
  man >>= BigInt(tz);
  exp += tz;
  return { man: x < 0 ? -man : man, exp };
}

/** The double nearest to man * 2^exp (ties to even), subnormals included; ±Infinity past the range. */
export function nearestDouble(man: bigint, exp: number): number {
  if (man < 0n) return -nearestDouble(-man, exp);
  if (man === 0n) return 0;
  const top = exp + bitLength(man);
  if (top > 1025) return Number.POSITIVE_INFINITY;
  const grid = Math.max(top - 53, -1074);
  let r: bigint;
  if (exp >= grid) {
    r = man << BigInt(exp - grid);
  } else {
    const sh = BigInt(grid - exp);
    r = man >> sh;
    const rem = man - (r << sh);
    const half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (r & 1n) === 1n)) r += 1n;
  }
  return Number(r) * 2 ** grid;
}

const TWO_53 = 2n ** 53n;

/**
 * num / den (den != 0) rounded once to the nearest double, as CPython's int / int does for any
 * size of operands; ±Infinity past the double range, -0.0 for a zero quotient of opposite signs.
 */
export function ratioToDouble(num: bigint, den: bigint): number {
  const negative = num < 0n !== den < 0n;
  const n = num < 0n ? -num : num;
  const d = den < 0n ? -den : den;
  // Both exact as doubles: one IEEE division rounds correctly.
  if (n < TWO_53 && d < TWO_53) return Number(num) / Number(den);
  if (n === 0n) return negative ? -0 : 0;
  // A quotient with 55+ significant bits plus a sticky bit, then a single rounding.
  const shift = bitLength(d) - bitLength(n) + 56;
  const a = shift >= 0 ? n << BigInt(shift) : n;
  const b = shift >= 0 ? d : d << BigInt(-shift);
  const q = a / b;
  const sticky = a % b === 0n ? 0n : 1n;
  const r = nearestDouble((q << 1n) | sticky, -(shift + 1));
  return negative ? -r : r;
}

// =============================================================================================
// Fixed-point series: a value v stands for v * 2^-G, with an error of a few units.

/**
 * atanh(num/den) for 0 <= num/den <= 1/3. Each term is the previous one times num²/den²: with
 * the small numerator and denominator of a double's reduced mantissa this stays linear per term,
 * which keeps precision=20000 in the same time range as mpmath's own AGM code.
 */
function atanhFixed(num: bigint, den: bigint, G: number): bigint {
  const n2 = num * num;
  const d2 = den * den;
  let term = (num << BigInt(G)) / den;
  let sum = term;
  for (let k = 3n; term !== 0n; k += 2n) {
    term = (term * n2) / d2;
    sum += term / k;
  }
  return sum;
}

/** atan(1/n) for an integer n >= 2 (Machin terms). */
function atanInvFixed(n: bigint, G: number): bigint {
  let term = (1n << BigInt(G)) / n;
  let sum = term;
  const n2 = n * n;
  for (let k = 3n, sign = -1n; term !== 0n; k += 2n, sign = -sign) {
    term /= n2;
    sum += (sign * term) / k;
  }
  return sum;
}

/** pi at F fractional bits. */
export function piFixed(F: number): bigint {
  const G = F + 32;
  return (16n * atanInvFixed(5n, G) - 4n * atanInvFixed(239n, G)) >> 32n;
}

/** ln 2 at F fractional bits. */
export function ln2Fixed(F: number): bigint {
  const G = F + 32;
  return (2n * atanhFixed(1n, 3n, G)) >> 32n;
}

/** ln(man * 2^exp) for man > 0, at F fractional bits. */
export function lnFixed(man: bigint, exp: number, F: number): bigint {
  // Write x = (P/Q) * 2^k with P/Q in [1/sqrt2, sqrt2); then ln x = 2 atanh((P-Q)/(P+Q)) + k ln 2.
  const bl = bitLength(man);
  let p = man;
  const q = 1n << BigInt(bl);
  let k = exp + bl;
  if (2n * man * man < q * q) {
    p = man * 2n;
    k -= 1;
  }
  const G = F + 32 + bitLength(BigInt(Math.abs(k))) + bitLength(BigInt(F));
  const num = p - q;
  const den = p + q;
  const s = num < 0n ? -atanhFixed(-num, den, G) : atanhFixed(num, den, G);
  const v = 2n * s + BigInt(k) * 2n * atanhFixed(1n, 3n, G);
  return v >> BigInt(G - F);
}

/** exp(r) at F fractional bits, for a fixed-point |r| < 1 given at F bits. */
function expFixedSmall(r: bigint, F: number): bigint {
  const one = 1n << BigInt(F);
  let sum = one;
  let term = one;
  for (let i = 1n; term !== 0n; i++) {
    term = (term * r) / (i << BigInt(F));
    sum += term;
  }
  return sum;
}

// =============================================================================================
// glibc's pow (the ARM optimized-routines algorithm, FMA build).
//
// glibc 2.28 and later (musl too) compute pow with a table-driven log and exp in double-double
// arithmetic. The result is not correctly rounded (errors up to 0.52 ULP), which shows: `457.0 ** 6`
// is 9109555799784050.0 in CPython, not the nearest-even 9109555799784048.0. On x86-64 with FMA,
// glibc selects the variant built with -mfma, where GCC contracts every `a*b + c` into one fused
// operation; `fma` below does that exactly on bigints, and plain JS arithmetic supplies the other
// IEEE operations. The two 128-entry tables are rebuilt from their definitions at module load
// (they match glibc 2.36's rodata bit for bit).

/** A C99 hex float literal such as `-0x1.62e42fefa3800p-1` (JS has none). */
function hexFloat(text: string): number {
  const m = /^(-?)0x([0-9a-f])\.([0-9a-f]*)p([+-]?\d+)$/i.exec(text)!;
  const digits = m[3]!;
  const v = nearestDouble(BigInt(`0x${m[2]}${digits}`), Number(m[4]) - 4 * digits.length);
  return m[1] === '-' ? -v : v;
}

/** fma(a, b, c): a*b + c with a single rounding. */
function fma(a: number, b: number, c: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) return a * b + c;
  const x = floatParts(a);
  const y = floatParts(b);
  const z = floatParts(c);
  const productExp = x.exp + y.exp;
  const e = Math.min(productExp, z.exp);
  return nearestDouble(((x.man * y.man) << BigInt(productExp - e)) + (z.man << BigInt(z.exp - e)), e);
}

const POW_OFF = 0x3fe6955500000000n;
const LN2_HI = hexFloat('0x1.62e42fefa3800p-1');
const LN2_LO = hexFloat('0x1.ef35793c76730p-45');
/** log1p polynomial, already scaled the way the evaluation expects. */
const LOG_POLY = [
  '-0x1.0000000000000p-1',
  '-0x1.5555555555560p-1',
  '0x1.0000000000006p-1',
  '0x1.999999959554ep-1',
  '-0x1.555555529a47ap-1',
  '-0x1.2495b9b4845e9p+0',
  '0x1.0002b8b263fc3p+0',
].map(hexFloat) as [number, number, number, number, number, number, number];
const INV_LN2_N = hexFloat('0x1.71547652b82fep+7');
const NEG_LN2_HI_N = hexFloat('-0x1.62e42fefa0000p-8');
const NEG_LN2_LO_N = hexFloat('-0x1.cf79abc9e3b3ap-47');
const [EXP_C2, EXP_C3, EXP_C4, EXP_C5] = [
  '0x1.ffffffffffdbdp-2',
  '0x1.555555555543cp-3',
  '0x1.55555cf172b91p-5',
  '0x1.1111167a4d017p-7',
].map(hexFloat) as [number, number, number, number];
const EXP_SHIFT = hexFloat('0x1.8p52');

interface PowTables {
  /** invc, logc, logctail per subinterval of [0x1.69555p-1, 0x1.69555p0). */
  readonly log: readonly (readonly [number, number, number])[];
  /** tail bits, scale bits - (k << 45), interleaved as in glibc's __exp_data.tab. */
  readonly exp: readonly bigint[];
}

/** Build the two tables from their definitions (about 10 ms, once at module load). */
function buildPowTables(): PowTables {
  const F = 160;
  const log: [number, number, number][] = [];
  for (let i = 0n; i < 128n; i++) {
    // c sits near the centre of the subinterval and 1/c = j/N (or j/2N) has few bits.
    const lo = floatParts(asDouble(POW_OFF + (i << 45n)));
    const hi = floatParts(asDouble(POW_OFF + ((i + 1n) << 45n)));
    // centre = (lo + hi) / 2 = sum * 2^e exactly
    const common = Math.min(lo.exp, hi.exp);
    const sum = (lo.man << BigInt(lo.exp - common)) + (hi.man << BigInt(hi.exp - common));
    const e = common - 1;
    const scale = e + bitLength(sum) <= 0 ? 7 : 8;
    // j = round(2^scale / centre), halves up
    const num = e < 0 ? 1n << BigInt(scale - e) : 1n << BigInt(scale);
    const den = e < 0 ? sum : sum << BigInt(e);
    const j = (2n * num + den) / (2n * den);
    const invc = Number(j) / 2 ** scale;
    const lnC = -lnFixed(j, -scale, F);
    const shift = BigInt(F - 43);
    const logc43 = (2n * lnC + (1n << shift)) >> (shift + 1n);
    const logc = Number(logc43) / 2 ** 43;
    log.push([invc, logc, nearestDouble(lnC - (logc43 << shift), -F)]);
  }
  const exp: bigint[] = [];
  const ln2 = ln2Fixed(F);
  for (let k = 0n; k < 128n; k++) {
    // 2^(k/N) ~= H * (1 + T): H the nearest double, T = (2^(k/N) - H) / H rounded
    const v = expFixedSmall((k * ln2) / 128n, F);
    const h = nearestDouble(v, -F);
    const hp = floatParts(h);
    const hScaled = hp.man << BigInt(hp.exp + F);
    const t = ratioToDouble(v - hScaled, hScaled);
    exp.push(t === 0 ? 0n : asBits(t), (asBits(h) - (k << 45n)) & U64);
  }
  return { log, exp };
}

const POW_TABLES: PowTables = buildPowTables();

/** `log_inline`: log(x) as hi + tail, x given by its bits (subnormals pre-normalised). */
function powLog(ix: bigint): [number, number] {
  const T = POW_TABLES.log;
  const A = LOG_POLY;
  const tmp = (ix - POW_OFF) & U64;
  const i = Number((tmp >> 45n) % 128n);
  const k = Number(BigInt.asIntN(64, tmp) >> 52n);
  const z = asDouble((ix - (tmp & (0xfffn << 52n))) & U64);
  const kd = k;
  const [invc, logc, logctail] = T[i]!;
  const r = fma(z, invc, -1);
  const t1 = fma(kd, LN2_HI, logc);
  const t2 = t1 + r;
  const lo1 = fma(kd, LN2_LO, logctail);
  const lo2 = t1 - t2 + r;
  const ar = A[0] * r;
  const ar2 = r * ar;
  const ar3 = r * ar2;
  const hi = t2 + ar2;
  const lo3 = fma(ar, r, -ar2);
  const lo4 = t2 - hi + ar2;
  const q = fma(ar2, fma(ar2, fma(r, A[6], A[5]), fma(r, A[4], A[3])), fma(r, A[2], A[1]));
  const lo = fma(ar3, q, lo1 + lo2 + lo3 + lo4);
  const y = hi + lo;
  return [y, hi - y + lo];
}

/** `specialcase` of exp_inline: results near overflow or in the subnormal range. */
function powExpSpecial(tmp: number, sbits0: bigint, ki: bigint): number {
  if ((ki & 0x80000000n) === 0n) {
    const scale = asDouble(sbits0 - (1009n << 52n));
    return 2 ** 1009 * fma(scale, tmp, scale);
  }
  const sbits = (sbits0 + (1022n << 52n)) & U64;
  const scale = asDouble(sbits);
  let y = fma(scale, tmp, scale);
  if (Math.abs(y) < 1) {
    const one = y < 0 ? -1 : 1;
    let lo = fma(scale, tmp, scale - y);
    const hi = one + y;
    lo = one - hi + y + lo;
    y = hi + lo - one;
    if (y === 0) y = asDouble(sbits & 0x8000000000000000n);
  }
  return 2 ** -1022 * y;
}

/** `exp_inline(x, xtail)` for a positive result. */
function powExp(x: number, xtail: number): number {
  const T = POW_TABLES.exp;
  let abstop = Number(asBits(x) >> 52n) & 0x7ff;
  if ((abstop - 0x3c9) >>> 0 >= 0x408 - 0x3c9) {
    if ((abstop - 0x3c9) >>> 0 >= 0x80000000) return 1 + x;
    if (abstop >= 0x409) return x < 0 ? 0 : Number.POSITIVE_INFINITY;
    abstop = 0;
  }
  let kd = fma(INV_LN2_N, x, EXP_SHIFT);
  const ki = asBits(kd);
  kd -= EXP_SHIFT;
  let r = fma(kd, NEG_LN2_LO_N, fma(kd, NEG_LN2_HI_N, x));
  r += xtail;
  const idx = Number(2n * (ki % 128n));
  const top = (ki << 45n) & U64;
  const tail = asDouble(T[idx]!);
  const sbits = (T[idx + 1]! + top) & U64;
  const r2 = r * r;
  const tmp = fma(r2 * r2, fma(r, EXP_C5, EXP_C4), fma(r2, fma(r, EXP_C3, EXP_C2), tail + r));
  if (abstop === 0) return powExpSpecial(tmp, sbits, ki);
  const scale = asDouble(sbits);
  return fma(scale, tmp, scale);
}

/** The main path of glibc's pow: finite x > 0, x != 1, finite y != 0. */
function powPositive(x: number, y: number): number {
  let ix = asBits(x);
  const topx = Number(ix >> 52n);
  const topy = Number(asBits(y) >> 52n) & 0x7ff;
  if ((topy - 0x3be) >>> 0 >= 0x43e - 0x3be) {
    // |y| < 2^-65: x^y ~ 1 + y log x; |y| >= 2^63: certain overflow or underflow.
    if (topy < 0x3be) return x > 1 ? 1 + y : 1 - y;
    return x > 1 === y > 0 ? Number.POSITIVE_INFINITY : 0;
  }
  if (topx === 0) {
    // Subnormal x: normalise so the exponent becomes negative.
    ix = asBits(x * 2 ** 52) & 0x7fffffffffffffffn;
    ix = (ix - (52n << 52n)) & U64;
  }
  const [hi, lo] = powLog(ix);
  const ehi = y * hi;
  const elo = fma(y, lo, fma(y, hi, -ehi));
  return powExp(ehi, elo);
}

/**
 * C `pow(x, y)` with glibc's results: the C99 special values (NaN, infinities, zeros, negative
 * bases: NaN for a fractional exponent, the sign of x for an odd integer one) and glibc's
 * algorithm for everything else. Overflow gives Infinity and underflow 0; mapping those to
 * Python's exceptions is the caller's business.
 */
export function pow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.NaN;
  if (x < 0 || Object.is(x, -0)) {
    if (Number.isFinite(x) && x < 0 && Number.isFinite(y) && !Number.isInteger(y)) return Number.NaN;
    const r = pow(-x, y);
    return Math.abs(y) % 2 === 1 ? -r : r;
  }
  if (!Number.isFinite(y)) return x < 1 === y < 0 ? Number.POSITIVE_INFINITY : 0;
  if (x === 0) return y < 0 ? Number.POSITIVE_INFINITY : 0;
  if (x === Number.POSITIVE_INFINITY) return y < 0 ? 0 : Number.POSITIVE_INFINITY;
  return powPositive(x, y);
}

// =============================================================================================
// cos and sin.

/** [cos(x), sin(x)] at F fractional bits for a finite double x, after reduction modulo pi/2. */
function cosSinFixed(x: number, F: number): [bigint, bigint] {
  const xm = floatParts(Math.abs(x));
  const G = F + Math.max(0, xm.exp + bitLength(xm.man)) + 16;
  const g = BigInt(G);
  const halfPi = piFixed(G) >> 1n;
  const sh = xm.exp + G;
  const X = sh >= 0 ? xm.man << BigInt(sh) : xm.man >> BigInt(-sh);
  const q = (2n * X + halfPi) / (2n * halfPi);
  const r = X - q * halfPi;
  const r2 = (r * r) >> g;
  let c = 1n << g;
  let s = r;
  let termC = c;
  let termS = r;
  for (let i = 1n; termC !== 0n || termS !== 0n; i++) {
    termC = -(termC * r2) / (((2n * i - 1n) * (2n * i)) << g);
    termS = -(termS * r2) / ((2n * i * (2n * i + 1n)) << g);
    c += termC;
    s += termS;
  }
  const quadrant = Number(q % 4n);
  let [cos, sin] = [
    [c, s],
    [-s, c],
    [-c, -s],
    [s, -c],
  ][quadrant]! as [bigint, bigint];
  if (x < 0) sin = -sin;
  const down = BigInt(G - F);
  cos >>= down;
  sin >>= down;
  return [cos, sin];
}

/**
 * Correctly rounded [cos(x), sin(x)] for a finite x. glibc's cos and sin are not correctly
 * rounded either (below 0.55 ULP), so about 1 complex pow result in 200 differs from the
 * reference in the last digit; porting glibc's s_sin.c would close that gap.
 */
export function correctlyRoundedCosSin(x: number): [number, number] {
  if (x === 0) return [1, x];
  const settle = (pick: 0 | 1): number => {
    for (let F = 96; ; F *= 2) {
      const v = cosSinFixed(x, F)[pick];
      const lo = nearestDouble(v - 8n, -F);
      if (lo === nearestDouble(v + 8n, -F) || F > 8192) return lo;
    }
  };
  return [settle(0), settle(1)];
}
