/**
 * The domains' tool schemas with the reference's own docs, where the pulled files are on this
 * machine ($SEAL_TAU2_DATA, else the cache `seal data pull tau2` fills; the files are never
 * committed): every tool gets a description of its own and every parameter one, except the four
 * the reference's docstrings leave without an Args entry. Skipped, saying so, where the source
 * files are not there or not the pinned ones.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveTau2Root, TAU2_MANIFEST } from '../../../src/envs/tau2/data.js';
import { loadAirlineDomain } from '../../../src/envs/tau2/domains/airline/index.js';
import { loadRetailDomain } from '../../../src/envs/tau2/domains/retail/index.js';
import { loadTelecom } from '../../../src/envs/tau2/domains/telecom/environment.js';
import { loadToolDocs } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2ToolSchema } from '../../../src/envs/tau2/types.js';

const ROOT = resolveTau2Root(undefined);
const pinned = TAU2_MANIFEST.files.every((f) => {
  const p = join(ROOT, f.path);
  return existsSync(p) && createHash('sha256').update(readFileSync(p)).digest('hex') === f.sha256;
});
if (!pinned)
  console.warn(
    `tool docs of the pulled sources: skipped, no pinned τ² files at ${ROOT} (seal data pull tau2)`,
  );

/** what a schema leaves undescribed: the tool, or a parameter (nested models' fields included) */
function undescribed(s: Tau2ToolSchema): string[] {
  const out: string[] = [];
  if (s.function.description === s.function.name) out.push(s.function.name);
  const props = (s.function.parameters.properties ?? {}) as Record<string, { description?: string }>;
  for (const [k, v] of Object.entries(props)) if (!v.description) out.push(`${s.function.name}.${k}`);
  const defs = (s.function.parameters.$defs ?? {}) as Record<
    string,
    { properties?: Record<string, { description?: string }> }
  >;
  for (const [m, d] of Object.entries(defs))
    for (const [k, v] of Object.entries(d.properties ?? {})) if (!v.description) out.push(`${m}.${k}`);
  return out;
}

describe.skipIf(!pinned)('the reference tool docs on the domains', () => {
  const docs = loadToolDocs(ROOT);

  it.each([
    ['retail', () => loadRetailDomain(ROOT, docs), 15, 0, []],
    ['airline', () => loadAirlineDomain(ROOT, docs), 14, 0, []],
    [
      'telecom',
      () => loadTelecom(ROOT, docs),
      13,
      30,
      [
        'set_network_mode_preference.mode',
        'set_apn_settings.apn_settings',
        'check_app_status.app_name',
        'check_app_permissions.app_name',
      ],
    ],
  ] as const)(
    '%s: every tool and parameter described as the reference describes it',
    (_name, load, agent, user, bare) => {
      const env = load().makeEnvironment();
      expect(env.agentTools()).toHaveLength(agent);
      expect(env.userTools()).toHaveLength(user);
      const missing = [...env.agentTools(), ...env.userTools()].flatMap(undescribed);
      expect(missing).toEqual(bare);
    },
  );

  it("a model a tool takes carries its docstring, cleaned, as the model's description", () => {
    const tool = loadTelecom(ROOT, docs)
      .makeEnvironment()
      .userTools()
      .find((t) => t.function.name === 'set_apn_settings')!;
    const defs = tool.function.parameters.$defs as Record<string, Record<string, unknown>>;
    expect(docs.model('APNSettings')).toMatch(/\S/);
    expect(defs.APNSettings!.description).toBe(docs.model('APNSettings'));
    // and, a BaseModelNoExtra, refuses other keys as pydantic's schema says
    expect(Object.keys(defs.APNSettings!)).toEqual([
      'additionalProperties',
      'description',
      'properties',
      'title',
      'type',
    ]);
    expect(defs.APNSettings!.additionalProperties).toBe(false);
  });
});
