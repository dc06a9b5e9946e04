/** The retail domain: its database, tools, policy and tasks, loaded from a data root. */
import { deepClone, type Model } from '../../pydantic.js';
import { Toolkit, ToolkitEnvironment } from '../../toolkit.js';
import type { Tau2Domain, Tau2DomainLoader } from '../../types.js';
import { readDomainFiles } from '../common.js';
import { RetailDB } from './models.js';
import { RETAIL_TOOLS } from './tools.js';

export const loadRetailDomain: Tau2DomainLoader = (root, docs): Tau2Domain => {
  const files = readDomainFiles(root, 'retail');
  const template = RetailDB.parse(files.db);
  return {
    name: 'retail',
    tasks: files.tasks,
    makeEnvironment: () =>
      new ToolkitEnvironment({
        domain: 'retail',
        policy: files.policy,
        tools: new Toolkit<Model<RetailDB>>({
          className: 'RetailTools',
          dbModel: RetailDB,
          db: deepClone(template),
          tools: RETAIL_TOOLS,
          docs,
        }),
      }),
  };
};
