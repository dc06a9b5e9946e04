/**
 * The tools' documentation, read at run time from the reference's source files that
 * `seal data pull tau2` downloads (seal commits none of that prose). The files are parsed as
 * text (py-source.ts), never run: each class's methods with their docstrings split as the
 * reference's docstring parser splits them (docstring.ts), each pydantic field's
 * `Field(description=...)`, and each class's own docstring, which pydantic shows as a model's
 * description in a JSON schema.
 *
 * Names: a class is looked up by its name (`RetailTools`, `FlightInfo`), or qualified by the
 * folder of its module (`airline.User`, `telecom.Address`, `environment.ToolKitBase`) where two
 * domains define a class of the same name; a bare name that two modules define is a programming
 * error and throws. Fields and methods a class inherits from a base class in these files are
 * found through it, as Python finds them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../util/errors.js';
import { TAU2_MANIFEST } from './data.js';
import { cleandoc, parseDocstring } from './docstring.js';
import {
  fieldDescription,
  outlineModule,
  type PyClassOutline,
  PySourceError,
  type PyToken,
} from './py-source.js';
import type { ToolDoc, ToolDocs } from './types.js';

/** The repository paths of the source files the docs come from. */
export const TOOL_DOC_SOURCES: readonly string[] = TAU2_MANIFEST.files
  .filter((f) => f.kind === 'tool-docs')
  .map((f) => f.path);

interface ClassEntry {
  readonly qualified: string;
  /** the module's folder: `retail`, `airline`, `telecom`, `environment` */
  readonly scope: string;
  readonly outline: PyClassOutline;
  /** the module's `NAME = Annotated[..., Field(description=...)]` aliases */
  readonly aliases: ReadonlyMap<string, readonly PyToken[]>;
}

/** The folder a module lives in, the scope its class names are qualified by. */
const scopeOf = (repoPath: string) => repoPath.split('/').at(-2)!;

/** The docs of a data root; `available: false` (every lookup undefined) unless all source files are there. */
export function loadToolDocs(root: string): ToolDocs {
  const paths = TOOL_DOC_SOURCES.map((p) => join(root, p));
  if (!paths.every((p) => existsSync(p))) return NO_TOOL_DOCS;
  const sources = TOOL_DOC_SOURCES.map((p, i) => ({ path: p, text: readFileSync(paths[i]!, 'utf8') }));
  try {
    return toolDocsOfSources(sources);
  } catch (e) {
    if (!(e instanceof PySourceError)) throw e;
    throw new UserError(
      `the τ² tool docs in ${root} cannot be read (${e.message}); pull them again with \`seal data pull tau2\``,
    );
  }
}

/** Docs with no sources: every tool is described by its name, as the reference describes one without a docstring. */
export const NO_TOOL_DOCS: ToolDocs = {
  available: false,
  tool: () => undefined,
  field: () => undefined,
  model: () => undefined,
};

/** Docs from source texts (`path` is the repository path, which names the module's scope). */
export function toolDocsOfSources(sources: readonly { path: string; text: string }[]): ToolDocs {
  const byName = new Map<string, ClassEntry[]>();
  const byQualified = new Map<string, ClassEntry>();
  for (const { path, text } of sources) {
    const scope = scopeOf(path);
    const outline = outlineModule(text, path);
    for (const c of outline.classes) {
      const entry: ClassEntry = {
        qualified: `${scope}.${c.name}`,
        scope,
        outline: c,
        aliases: outline.assignments,
      };
      byQualified.set(entry.qualified, entry);
      byName.set(c.name, [...(byName.get(c.name) ?? []), entry]);
    }
  }

  const find = (name: string): ClassEntry | undefined => {
    if (name.includes('.')) return byQualified.get(name);
    const found = byName.get(name) ?? [];
    if (found.length > 1)
      throw new Error(
        `tool docs: ${name} is defined in ${found.map((e) => e.qualified).join(' and ')}; name one of them`,
      );
    return found[0];
  };
  /** a base class named in `from`'s module: its own scope first, then any unique definition */
  const base = (from: ClassEntry, name: string): ClassEntry | undefined => {
    const bare = name.split('.').at(-1)!;
    const same = byQualified.get(`${from.scope}.${bare}`);
    if (same && same !== from) return same;
    const others = byName.get(bare) ?? [];
    return others.length === 1 ? others[0] : undefined;
  };
  /** the class and then its bases, depth first, left to right (Python's MRO for these single-inheritance chains) */
  const lineage = (start: ClassEntry): ClassEntry[] => {
    const seen = new Set<ClassEntry>();
    const walk = (c: ClassEntry) => {
      if (seen.has(c)) return;
      seen.add(c);
      for (const b of c.outline.bases) {
        const e = base(c, b);
        if (e) walk(e);
      }
    };
    walk(start);
    return [...seen];
  };

  const docCache = new Map<string, ToolDoc | undefined>();
  return {
    available: true,
    tool(owner, name) {
      const start = find(owner);
      if (!start) return undefined;
      const key = `${start.qualified}.${name}`;
      if (docCache.has(key)) return docCache.get(key);
      const method = lineage(start)
        .map((c) => c.outline.methods.get(name))
        .find((m) => m !== undefined);
      const doc = method?.docstring === undefined ? undefined : parseDocstring(method.docstring);
      docCache.set(key, doc);
      return doc;
    },
    field(model, fieldName) {
      const start = find(model);
      if (!start) return undefined;
      for (const c of lineage(start)) {
        const f = c.outline.fields.get(fieldName);
        if (!f) continue;
        // pydantic: the assigned Field's description, else the annotation's, else an Annotated alias's
        const assigned = fieldDescription(f.value, true);
        const own = assigned !== undefined ? assigned : fieldDescription(f.annotation);
        if (own !== undefined) return own ?? undefined;
        if (f.annotation.length === 1 && f.annotation[0]!.kind === 'name') {
          const alias = c.aliases.get(f.annotation[0]!.text);
          const viaAlias = alias && alias[0]?.text === 'Annotated' ? fieldDescription(alias) : undefined;
          return viaAlias ?? undefined;
        }
        return undefined;
      }
      return undefined;
    },
    model(name) {
      const doc = find(name)?.outline.docstring;
      return doc === undefined ? undefined : cleandoc(doc);
    },
  };
}

/** The description the reference gives a tool (`Tool._get_description`): short, and long after a blank line. */
export function toolDescription(doc: ToolDoc | undefined, name: string): string {
  if (!doc?.short) return name;
  return doc.long ? `${doc.short}\n\n${doc.long}` : doc.short;
}
