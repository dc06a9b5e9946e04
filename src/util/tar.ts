/**
 * Reading a tar archive (gzipped or not) into its regular files: the POSIX ustar header, with the
 * pax (`x`) and GNU (`L`) long names a writer uses for paths over 100 bytes. Small enough to keep
 * here rather than take a dependency for one archive a command unpacks. Links, devices and paths
 * that leave the archive's folder (absolute, `..`) are refused, not unpacked: an archive from a
 * service is unpacked into a folder the user named, and must not write anywhere else.
 */
import { gunzipSync } from 'node:zlib';

export interface TarFile {
  /** the path inside the archive, `/`-separated, no leading `./` */
  readonly path: string;
  readonly data: Uint8Array;
}

export class TarError extends Error {
  override name = 'TarError';
}

const BLOCK = 512;

function text(block: Uint8Array, start: number, length: number): string {
  const bytes = block.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString('utf8');
}

/** an octal field, or GNU's base-256 form (high bit set) for sizes over 8 GiB */
function number(block: Uint8Array, start: number, length: number): number {
  if ((block[start]! & 0x80) !== 0) {
    let v = block[start]! & 0x7f;
    for (let i = 1; i < length; i++) v = v * 256 + block[start + i]!;
    return v;
  }
  const s = text(block, start, length).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new TarError(`a tar header holds a bad number field '${s}'`);
  return Number.parseInt(s, 8);
}

/** the header's checksum, over unsigned bytes or (as some old writers did) signed ones */
function checksumOk(block: Uint8Array): boolean {
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 32 : block[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  const stored = number(block, 148, 8);
  return stored === unsigned || stored === signed;
}

/** pax records `LEN key=value\n`; only `path` is used */
function paxPath(data: Uint8Array): string | undefined {
  const s = Buffer.from(data).toString('utf8');
  let path: string | undefined;
  for (let i = 0; i < s.length; ) {
    const space = s.indexOf(' ', i);
    const len = Number.parseInt(s.slice(i, space), 10);
    if (space === -1 || !Number.isFinite(len) || len <= 0) break;
    const record = s.slice(space + 1, i + len - 1);
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    i += len;
  }
  return path;
}

/** a member's path made relative and checked to stay inside the archive's folder */
function safePath(raw: string): string {
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (raw.startsWith('/') || parts.includes('..') || parts.length === 0)
    throw new TarError(`the archive holds a path outside its folder: '${raw}'`);
  return parts.join('/');
}

/** the regular files of a tar (or .tar.gz) archive, in order; folders are implied by paths */
export function readTar(archive: Uint8Array): TarFile[] {
  const bytes = archive[0] === 0x1f && archive[1] === 0x8b ? new Uint8Array(gunzipSync(archive)) : archive;
  const files: TarFile[] = [];
  let longName: string | undefined;
  for (let at = 0; at + BLOCK <= bytes.length; ) {
    const header = bytes.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    if (!checksumOk(header)) throw new TarError(`not a tar archive (bad header checksum at byte ${at})`);
    const size = number(header, 124, 12);
    const type = String.fromCharCode(header[156]!);
    const dataStart = at + BLOCK;
    if (dataStart + size > bytes.length) throw new TarError('the tar archive is cut short');
    const data = bytes.subarray(dataStart, dataStart + size);
    at = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    const magic = text(header, 257, 6);
    const prefix = magic === 'ustar' ? text(header, 345, 155) : '';
    const name = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    if (type === 'x') {
      longName = paxPath(data);
      continue;
    }
    if (type === 'L') {
      longName = text(data, 0, data.length);
      continue;
    }
    longName = undefined;
    if (type === 'g' || type === '5') continue;
    if (type !== '0' && type !== '\0' && type !== '7')
      throw new TarError(`the archive holds '${name}', which is not a regular file (tar type '${type}')`);
    files.push({ path: safePath(name), data });
  }
  return files;
}
