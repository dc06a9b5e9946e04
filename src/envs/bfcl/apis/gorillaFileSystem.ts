/**
 * GorillaFileSystem: an in-memory directory tree with a current directory (SPEC 8.1).
 *
 * The reference is Python, and the model may pass any Python value as an argument, so every
 * operation is written against the Python value model and fails the way CPython would
 * (`'int' object has no attribute 'rstrip'`, `argument of type 'NoneType' is not iterable`,
 * `unhashable type: 'list'` ...). Names are therefore `PyValue`s and directory contents are
 * Python dicts keyed by `PyKey`, even though they are strings in every real scenario.
 *
 * The reference's accidental behaviours are kept on purpose (they are pinned by the golden
 * files); each one is marked "Quirk" where it happens.
 */
import { AttributeErrorForType, TypeError_, ValueError_ } from '../../py/errors.js';
import { compareCodePoints, repr, str } from '../../py/format.js';
import { add, compare, contains, formatFixed, getItem, iterate, len, strFor, truthy } from '../../py/ops.js';
import { joinStrings, splitlines, splitWhitespace } from '../../py/text.js';
import type { JsonValue, PyDict, PyKey, PyValue } from '../../py/values.js';
import {
  dictDelete,
  dictGet,
  dictOf,
  dictSet,
  PyObject,
  pyEquals,
  toStateJson,
  typeName,
} from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, MethodSpec, ParamSpec, ScenarioContext } from './api.js';
import { longContextConstant, opt, req } from './api.js';

// ---------------------------------------------------------------------------------------------
// Tree nodes
// ---------------------------------------------------------------------------------------------

type FsNode = FsFile | FsDirectory;

/** The reference's `File`: equal to another File with the same name and content. */
class FsFile extends PyObject {
  readonly pyTypeName = 'File';
  constructor(
    readonly name: PyValue,
    /** Any Python value: `echo` writes whatever it is given. */
    public content: PyValue,
  ) {
    super();
  }

  pyEquals(other: PyValue): boolean {
    return (
      other instanceof FsFile && pyEquals(this.name, other.name) && pyEquals(this.content, other.content)
    );
  }

  toStateJson(): JsonValue {
    return { type: 'file', name: toStateJson(this.name), content: toStateJson(this.content) };
  }

  override pyRepr(): string {
    return `<<File: ${str(this.name)}, Content: ${str(this.content)}>>`;
  }
}

/**
 * The reference's `Directory`. Equality compares name and contents recursively and ignores the
 * parent link, which is what lets the stale links left by `mv` go unnoticed by the state checker.
 */
class FsDirectory extends PyObject {
  readonly pyTypeName = 'Directory';
  /** Insertion-ordered like a Python dict; keys use Python key equality (see `dictGet`). */
  contents: Map<PyKey, FsNode> = new Map();
  constructor(
    readonly name: PyValue,
    readonly parent: FsDirectory | null,
  ) {
    super();
  }

  /** `_add_file`: refuses a name that is already present (ValueError). */
  addFile(fileName: PyValue, content: PyValue = ''): void {
    if (contains(this.contents, fileName)) {
      throw ValueError_(`File '${str(fileName)}' already exists in directory '${str(this.name)}'.`);
    }
    dictSet(this.contents, fileName as PyKey, new FsFile(fileName, content));
  }

  /** `_add_directory`: refuses a name that is already present (ValueError). */
  addDirectory(dirName: PyValue): void {
    if (contains(this.contents, dirName)) {
      throw ValueError_(`Directory '${str(dirName)}' already exists in directory '${str(this.name)}'.`);
    }
    dictSet(this.contents, dirName as PyKey, new FsDirectory(dirName, this));
  }

  /** `_get_item`: `.` is the directory itself, otherwise `contents.get(name)`. */
  getItem(itemName: PyValue): FsNode | null {
    if (pyEquals(itemName, '.')) return this;
    return (dictGet(this.contents, itemName as PyKey) as FsNode | undefined) ?? null;
  }

  /** `item in self.contents`, with Python's TypeError for unhashable names. */
  has(itemName: PyValue): boolean {
    return contains(this.contents, itemName);
  }

  pyEquals(other: PyValue): boolean {
    return (
      other instanceof FsDirectory &&
      pyEquals(this.name, other.name) &&
      pyEquals(this.contents, other.contents)
    );
  }

  toStateJson(): JsonValue {
    // `cp` of a directory into itself (or `mv` into itself) makes a directory contain itself.
    // The reference has no state form for that; write Python's recursion marker instead of
    // recursing forever.
    if (inProgress.has(this.contents))
      return { type: 'directory', name: toStateJson(this.name), contents: '{...}' };
    inProgress.add(this.contents);
    try {
      const contents: { [key: string]: JsonValue } = {};
      for (const [key, node] of this.contents) contents[stateKey(key)] = node.toStateJson();
      return { type: 'directory', name: toStateJson(this.name), contents };
    } finally {
      inProgress.delete(this.contents);
    }
  }

  override pyRepr(): string {
    const parentName = this.parent ? str(this.parent.name) : 'None';
    // Python's dict repr prints a dict that is already being printed as `{...}`.
    if (inProgress.has(this.contents))
      return `<Directory: ${str(this.name)}, Parent: ${parentName}, Contents: {...}>`;
    inProgress.add(this.contents);
    try {
      return `<Directory: ${str(this.name)}, Parent: ${parentName}, Contents: ${repr(this.contents)}>`;
    } finally {
      inProgress.delete(this.contents);
    }
  }
}

/** Contents dicts on the current serialisation path (cycle guard for state and repr). */
const inProgress = new Set<Map<PyKey, FsNode>>();

/** Key of a contents dict in the golden state form (always a plain name in real data). */
function stateKey(key: PyKey): string {
  return typeof key === 'string' ? key : str(key);
}

// ---------------------------------------------------------------------------------------------
// Python string helpers the shared module does not provide
// ---------------------------------------------------------------------------------------------

/** The content of a file as bytes would be counted by `len(s.encode("utf-8"))`. */
function utf8Length(content: PyValue): bigint {
  return BigInt(Buffer.byteLength(strFor(content, 'encode'), 'utf8'));
}

/** Characters rejected by `_validate_file_or_directory_name`, in the reference's order. */
const INVALID_NAME_CHARS = '|/\\?%*:"><';

/** `any(c in name for c in INVALID_NAME_CHARS)` negated; `in` raises for non-containers. */
function isValidName(name: PyValue): boolean {
  for (const c of INVALID_NAME_CHARS) if (contains(name, c)) return false;
  return true;
}

const err = (message: string): PyDict => dictOf({ error: message });

// ---------------------------------------------------------------------------------------------
// The API class
// ---------------------------------------------------------------------------------------------

export class GorillaFileSystem implements BfclApi {
  readonly className = 'GorillaFileSystem' as const;
  longContext = false;
  root: FsDirectory = new FsDirectory('/', null);
  private currentDir: FsDirectory = this.root;

  loadScenario(config: PyDict, ctx: ScenarioContext): void {
    this.longContext = ctx.longContext;
    // DEFAULT_STATE: an empty root named "/" (not populated, even in long-context mode).
    this.root = new FsDirectory('/', null);
    if (contains(config, 'root')) {
      // Only the first key under "root" is used; it names the root directory.
      const rootConfig = getItem(config, 'root');
      const rootName = getItem(iterate(rootConfig), 0n);
      const rootDir = new FsDirectory(rootName, null);
      this.root = this.loadDirectory(getItem(getItem(rootConfig, rootName), 'contents'), rootDir, ctx);
    }
    this.currentDir = this.root;
  }

  private loadDirectory(current: PyValue, parent: FsDirectory, ctx: ScenarioContext): FsDirectory {
    let isBottommost = true;
    for (const entryName of iterate(current)) {
      const entry = getItem(current, entryName);
      const kind = getItem(entry, 'type');
      if (pyEquals(kind, 'directory')) {
        isBottommost = false;
        const dir = this.loadDirectory(getItem(entry, 'contents'), new FsDirectory(entryName, parent), ctx);
        dictSet(parent.contents, entryName as PyKey, dir);
      } else if (pyEquals(kind, 'file')) {
        let content = getItem(entry, 'content');
        if (this.longContext && !contains(longContextConstant(ctx, 'FILES_TAIL_USED'), entryName)) {
          content = add(content, longContextConstant(ctx, 'FILE_CONTENT_EXTENSION'));
        }
        dictSet(parent.contents, entryName as PyKey, new FsFile(entryName, content));
      }
    }
    // Long context: every directory without sub-directories (empty ones too) gets filler files.
    if (isBottommost && this.longContext) {
      for (const name of iterate(longContextConstant(ctx, 'POPULATE_FILE_EXTENSION'))) parent.addFile(name);
    }
    return parent;
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['long_context', this.longContext],
      ['root', this.root],
    ]);
  }

  /** `_navigate_to_directory(path)`: nested, relative or absolute; no `..` support. */
  private navigate(path: PyValue): FsDirectory | PyDict {
    if (path === null || pyEquals(path, '.')) return this.currentDir;
    if (pyEquals(path, '/')) return this.root;
    const p = strFor(path, 'strip');
    let dir = p.startsWith('/') ? this.root : this.currentDir;
    for (const part of p.replace(/^\/+|\/+$/g, '').split('/')) {
      const next = dir.getItem(part);
      if (!(next instanceof FsDirectory)) return err(`cd: '${p}': No such file or directory`);
      dir = next;
    }
    return dir;
  }

  pwd(): PyValue {
    // The reference's loop guard `dir.name != self.root` compares a name with a Directory, so it
    // is always true: the walk goes up to the top, root name included ("//" for a root "/").
    const names: PyValue[] = [];
    for (let dir: FsDirectory | null = this.currentDir; dir !== null; dir = dir.parent) names.push(dir.name);
    return dictOf({ current_working_directory: '/' + joinStrings('/', names.reverse()) });
  }

  ls(a: PyValue): PyValue {
    let names: PyValue[] = [...this.currentDir.contents.keys()];
    if (!truthy(a)) names = names.filter((n) => !strFor(n, 'startswith').startsWith('.'));
    return dictOf({ current_directory_content: names });
  }

  cd(folderArg: PyValue): PyValue {
    let folder = strFor(folderArg, 'rstrip').replace(/\/+$/, '');
    if (folder === '') folder = '/';
    if (folder !== '.' && folder !== '..' && folder !== '/' && folder.includes('/')) {
      return err(`cd: ${folder}: Unsupported path. Only one folder level at a time is supported.`);
    }
    if (folder === '..') {
      // Quirk: after `mv` of a directory, its children's parent is the old, detached object.
      if (this.currentDir.parent) this.currentDir = this.currentDir.parent;
      else if (pyEquals(this.root, this.currentDir))
        return err('Current directory is already the root. Cannot go back.');
      else return err('cd: ..: No such directory');
      return new Map();
    }
    const target = this.navigate(folder);
    if (!(target instanceof FsDirectory)) return target;
    this.currentDir = target;
    return dictOf({ current_working_directory: target.name });
  }

  mkdir(dirName: PyValue): PyValue {
    if (!isValidName(dirName)) {
      return err(`mkdir: cannot create directory '${str(dirName)}': Invalid character`);
    }
    if (this.currentDir.has(dirName))
      return err(`mkdir: cannot create directory '${str(dirName)}': File exists`);
    this.currentDir.addDirectory(dirName);
    return null;
  }

  touch(fileName: PyValue): PyValue {
    if (!isValidName(fileName)) return err(`touch: cannot touch '${str(fileName)}': Invalid character`);
    if (this.currentDir.has(fileName)) return err(`touch: cannot touch '${str(fileName)}': File exists`);
    this.currentDir.addFile(fileName);
    return null;
  }

  echo(content: PyValue, fileName: PyValue): PyValue {
    if (fileName === null) return dictOf({ terminal_output: content });
    if (!isValidName(fileName)) return err(`echo: cannot write to '${str(fileName)}': Invalid character`);
    // An empty (falsy) name also prints instead of writing.
    if (!truthy(fileName)) return dictOf({ terminal_output: content });
    if (!this.currentDir.has(fileName)) return err(`echo: cannot write to '${str(fileName)}': No such file`);
    const item = this.currentDir.getItem(fileName);
    // Quirk: writing to a directory name calls a method Directory lacks (AttributeError).
    if (!(item instanceof FsFile)) throw AttributeErrorForType(typeName(item), '_write');
    item.content = content;
    return null;
  }

  cat(fileName: PyValue): PyValue {
    if (!isValidName(fileName)) return err(`cat: '${str(fileName)}': Invalid character`);
    if (!this.currentDir.has(fileName)) return err(`cat: '${str(fileName)}': No such file or directory`);
    const item = this.currentDir.getItem(fileName);
    if (item instanceof FsFile) return dictOf({ file_content: item.content });
    return err(`cat: '${str(fileName)}': Is a directory`);
  }

  find(path: PyValue, name: PyValue): PyValue {
    const target = this.navigate(path);
    if (!(target instanceof FsDirectory)) {
      // The navigation error speaks as `cd:`; find rewrites the first occurrence.
      const message = dictGet(target, 'error') ?? '';
      if (typeof message === 'string' && message.startsWith('cd:'))
        return err(message.replace('cd:', 'find:'));
      return target;
    }
    const matches: PyValue[] = [];
    const search = (dir: FsDirectory, basePath: string): void => {
      for (const [itemName, item] of dir.contents) {
        const itemPath = `${basePath}/${str(itemName)}`;
        if (name === null || contains(itemName, name)) matches.push(itemPath);
        if (item instanceof FsDirectory) search(item, itemPath);
      }
    };
    search(target, strFor(path, 'rstrip').replace(/\/+$/, ''));
    return dictOf({ matches });
  }

  /** The file named `fileName` in the current directory, or null (missing or a directory). */
  private localFile(fileName: PyValue): FsFile | null {
    if (!this.currentDir.has(fileName)) return null;
    const item = this.currentDir.getItem(fileName);
    return item instanceof FsFile ? item : null;
  }

  wc(fileName: PyValue, mode: PyValue): PyValue {
    if (!contains(['l', 'w', 'c'], mode)) return err(`wc: invalid mode '${str(mode)}'`);
    const file = this.localFile(fileName);
    if (file) {
      const content = file.content;
      if (mode === 'l')
        return dictOf({ count: BigInt(splitlines(strFor(content, 'splitlines')).length), type: 'lines' });
      if (mode === 'w')
        return dictOf({ count: BigInt(splitWhitespace(strFor(content, 'split')).length), type: 'words' });
      return dictOf({ count: BigInt(len(content)), type: 'characters' });
    }
    return err(`wc: ${str(fileName)}: No such file or directory`);
  }

  sort(fileName: PyValue): PyValue {
    const file = this.localFile(fileName);
    if (file) {
      const lines = splitlines(strFor(file.content, 'splitlines')).sort(compareCodePoints);
      return dictOf({ sorted_content: lines.join('\n') });
    }
    return err(`sort: ${str(fileName)}: No such file or directory`);
  }

  grep(fileName: PyValue, pattern: PyValue): PyValue {
    const file = this.localFile(fileName);
    if (file) {
      const lines = splitlines(strFor(file.content, 'splitlines'));
      return dictOf({ matching_lines: lines.filter((line) => contains(line, pattern)) });
    }
    return err(`grep: ${str(fileName)}: No such file or directory`);
  }

  du(humanReadable: PyValue): PyValue {
    const sizeOf = (node: FsNode): bigint => {
      if (node instanceof FsFile) return utf8Length(node.content);
      let total = 0n;
      for (const child of node.contents.values()) total += sizeOf(child);
      return total;
    };
    const target = this.navigate(null);
    if (!(target instanceof FsDirectory)) return target;
    const total = sizeOf(target);
    let sizeText: string;
    if (truthy(humanReadable)) {
      // `f"{size:.2f} {unit}"`, dividing by 1024 until it fits; past TB it is PB.
      let size = Number(total);
      sizeText = '';
      for (const unit of ['B', 'KB', 'MB', 'GB', 'TB']) {
        if (size < 1024) {
          sizeText = `${formatFixed(size, 2)} ${unit}`;
          break;
        }
        size /= 1024;
      }
      if (sizeText === '') sizeText = `${formatFixed(size, 2)} PB`;
    } else {
      sizeText = `${total} bytes`;
    }
    return dictOf({ disk_usage: sizeText });
  }

  tail(fileName: PyValue, linesArg: PyValue): PyValue {
    const file = this.localFile(fileName);
    if (file) {
      const lines = splitlines(strFor(file.content, 'splitlines'));
      let n = linesArg;
      if (compare('>', n, BigInt(lines.length))) n = BigInt(lines.length);
      // Quirk: `content[-n:]`, so 0 gives every line and -k drops the first k lines; a float
      // smaller than the line count reaches the slice and raises.
      if (typeof n === 'number') {
        throw TypeError_('slice indices must be integers or None or have an __index__ method');
      }
      const start = -(typeof n === 'boolean' ? (n ? 1n : 0n) : (n as bigint));
      const from =
        start < 0n ? Math.max(0, lines.length + Number(start)) : Math.min(lines.length, Number(start));
      return dictOf({ last_lines: lines.slice(from).join('\n') });
    }
    return err(`tail: ${str(fileName)}: No such file or directory`);
  }

  diff(fileName1: PyValue, fileName2: PyValue): PyValue {
    if (this.currentDir.has(fileName1) && this.currentDir.has(fileName2)) {
      const file1 = this.currentDir.getItem(fileName1);
      const file2 = this.currentDir.getItem(fileName2);
      if (file1 instanceof FsFile && file2 instanceof FsFile) {
        const lines1 = splitlines(strFor(file1.content, 'splitlines'));
        const lines2 = splitlines(strFor(file2.content, 'splitlines'));
        // zip(): lines beyond the shorter file are ignored.
        const out: string[] = [];
        for (let i = 0; i < Math.min(lines1.length, lines2.length); i++) {
          if (lines1[i] !== lines2[i]) out.push(`- ${lines1[i]}\n+ ${lines2[i]}`);
        }
        return dictOf({ diff_lines: out.join('\n') });
      }
    }
    return err(`diff: ${str(fileName1)} or ${str(fileName2)}: No such file or directory`);
  }

  mv(source: PyValue, destination: PyValue): PyValue {
    const cwd = this.currentDir;
    if (!cwd.has(source)) return err(`mv: cannot move '${str(source)}': No such file or directory`);
    const item = cwd.getItem(source);
    if (item === null) return err(`mv: cannot move '${str(source)}': Not a file or directory`);
    if (contains(destination, '/')) {
      return err('mv: path not allowed in destination. Provide only a file or directory name.');
    }
    if (cwd.has(destination)) {
      const destItem = cwd.getItem(destination);
      if (!(destItem instanceof FsDirectory)) {
        return err(`mv: cannot move '${str(source)}' to '${str(destination)}': Not a directory`);
      }
      // The clash check uses str(source) while the insert below uses source itself.
      if (destItem.has(str(source))) {
        return err(`mv: cannot move '${str(source)}' to '${str(destination)}/${str(source)}': File exists`);
      }
      dictDelete(cwd.contents, source as PyKey);
      this.placeMoved(destItem, source, item);
      return dictOf({ result: `'${str(source)}' moved to '${str(destination)}/${str(source)}'` });
    }
    dictDelete(cwd.contents, source as PyKey);
    this.placeMoved(cwd, destination, item);
    return dictOf({ result: `'${str(source)}' moved to '${str(destination)}'` });
  }

  /**
   * Recreate a moved item under `name` in `dir`. Quirk: a moved directory is a new object that
   * takes over the old contents dict, but the children's parent links keep pointing at the old,
   * now detached directory (so `cd ..` from a child lands there).
   */
  private placeMoved(dir: FsDirectory, name: PyValue, item: FsNode): void {
    if (item instanceof FsFile) {
      dir.addFile(name, item.content);
    } else {
      dir.addDirectory(name);
      (dictGet(dir.contents, name as PyKey) as FsDirectory).contents = item.contents;
    }
  }

  rm(fileName: PyValue): PyValue {
    if (!this.currentDir.has(fileName))
      return err(`rm: cannot remove '${str(fileName)}': No such file or directory`);
    // Files and directories alike, non-empty directories included.
    if (this.currentDir.getItem(fileName) === null) {
      return err(`rm: cannot remove '${str(fileName)}': Not a file or directory`);
    }
    dictDelete(this.currentDir.contents, fileName as PyKey);
    return dictOf({ result: `'${str(fileName)}' removed` });
  }

  rmdir(dirName: PyValue): PyValue {
    if (!this.currentDir.has(dirName)) {
      return err(`rmdir: cannot remove '${str(dirName)}': No such file or directory`);
    }
    const item = this.currentDir.getItem(dirName);
    if (!(item instanceof FsDirectory)) return err(`rmdir: cannot remove '${str(dirName)}': Not a directory`);
    if (item.contents.size > 0) return err(`rmdir: cannot remove '${str(dirName)}': Directory not empty`);
    dictDelete(this.currentDir.contents, dirName as PyKey);
    return dictOf({ result: `'${str(dirName)}' removed` });
  }

  cp(source: PyValue, destination: PyValue): PyValue {
    const cwd = this.currentDir;
    if (!cwd.has(source)) return err(`cp: cannot copy '${str(source)}': No such file or directory`);
    const item = cwd.getItem(source);
    if (item === null) return err(`cp: cannot copy '${str(source)}': Not a file or directory`);
    if (contains(destination, '/')) {
      return err('cp: path not allowed in destination. Provide only a file or directory name.');
    }
    if (cwd.has(destination)) {
      const destItem = cwd.getItem(destination);
      if (!(destItem instanceof FsDirectory)) {
        return err(`cp: cannot copy '${str(source)}' to '${str(destination)}': Not a directory`);
      }
      // Quirk: the clash check looks up "<destination>/<source>", a key that never exists, so a
      // real clash surfaces as the ValueError of the insert below.
      if (destItem.has(`${str(destination)}/${str(source)}`)) {
        return err(`cp: cannot copy '${str(source)}' to '${str(destination)}/${str(source)}': File exists`);
      }
      this.placeCopy(destItem, source, item);
      return dictOf({ result: `'${str(source)}' copied to '${str(destination)}/${str(source)}'` });
    }
    this.placeCopy(cwd, destination, item);
    return dictOf({ result: `'${str(source)}' copied to '${str(destination)}'` });
  }

  /**
   * Copy `item` into `dir` under `name`. Quirk: a directory copy is shallow (a new contents dict
   * holding the same child objects), so writes through one copy show in the other. The dict is
   * copied after the insert, so copying a directory into itself makes it contain itself.
   */
  private placeCopy(dir: FsDirectory, name: PyValue, item: FsNode): void {
    if (item instanceof FsFile) {
      dir.addFile(name, item.content);
    } else {
      dir.addDirectory(name);
      const copy = new Map(item.contents);
      (dictGet(dir.contents, name as PyKey) as FsDirectory).contents = copy;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Method table (Python signature order; defaults applied here)
// ---------------------------------------------------------------------------------------------

/** A required argument: the executor guarantees it is bound. */
function need(args: BoundArgs, i: number): PyValue {
  const v = args[i];
  if (v === undefined) throw new Error(`GorillaFileSystem: required argument ${i} was not bound`);
  return v;
}

/** A method table entry. */
function method(
  params: readonly ParamSpec[],
  run: (self: GorillaFileSystem, args: BoundArgs) => PyValue,
): MethodSpec<GorillaFileSystem> {
  return { params, run };
}

/** An optional argument with its Python default. */
function orDefault(args: BoundArgs, i: number, dflt: PyValue): PyValue {
  const v = args[i];
  return v === undefined ? dflt : v;
}

export const gorillaFileSystem: ApiClass<GorillaFileSystem> = {
  className: 'GorillaFileSystem',
  stateless: false,
  create: () => new GorillaFileSystem(),
  methods: {
    pwd: method([], (self) => self.pwd()),
    ls: method([opt('a')], (self, args) => self.ls(orDefault(args, 0, false))),
    cd: method([req('folder')], (self, args) => self.cd(need(args, 0))),
    mkdir: method([req('dir_name')], (self, args) => self.mkdir(need(args, 0))),
    touch: method([req('file_name')], (self, args) => self.touch(need(args, 0))),
    echo: method([req('content'), opt('file_name')], (self, args) =>
      self.echo(need(args, 0), orDefault(args, 1, null)),
    ),
    cat: method([req('file_name')], (self, args) => self.cat(need(args, 0))),
    find: method([opt('path'), opt('name')], (self, args) =>
      self.find(orDefault(args, 0, '.'), orDefault(args, 1, null)),
    ),
    wc: method([req('file_name'), opt('mode')], (self, args) =>
      self.wc(need(args, 0), orDefault(args, 1, 'l')),
    ),
    sort: method([req('file_name')], (self, args) => self.sort(need(args, 0))),
    grep: method([req('file_name'), req('pattern')], (self, args) => self.grep(need(args, 0), need(args, 1))),
    du: method([opt('human_readable')], (self, args) => self.du(orDefault(args, 0, false))),
    tail: method([req('file_name'), opt('lines')], (self, args) =>
      self.tail(need(args, 0), orDefault(args, 1, 10n)),
    ),
    diff: method([req('file_name1'), req('file_name2')], (self, args) =>
      self.diff(need(args, 0), need(args, 1)),
    ),
    mv: method([req('source'), req('destination')], (self, args) => self.mv(need(args, 0), need(args, 1))),
    rm: method([req('file_name')], (self, args) => self.rm(need(args, 0))),
    rmdir: method([req('dir_name')], (self, args) => self.rmdir(need(args, 0))),
    cp: method([req('source'), req('destination')], (self, args) => self.cp(need(args, 0), need(args, 1))),
  },
};
