/** The airline domain: its database, tools, policy and tasks, loaded from a data root. */
import { deepClone, type Model } from '../../pydantic.js';
import { Toolkit, ToolkitEnvironment } from '../../toolkit.js';
import type { Tau2Domain, Tau2DomainLoader } from '../../types.js';
import { readDomainFiles } from '../common.js';
import { FlightDB } from './models.js';
import { AIRLINE_TOOLS } from './tools.js';

export const loadAirlineDomain: Tau2DomainLoader = (root, docs): Tau2Domain => {
  const files = readDomainFiles(root, 'airline');
  const template = FlightDB.parse(files.db);
  return {
    name: 'airline',
    tasks: files.tasks,
    makeEnvironment: () =>
      new ToolkitEnvironment({
        domain: 'airline',
        policy: files.policy,
        tools: new Toolkit<Model<FlightDB>>({
          className: 'AirlineTools',
          dbModel: FlightDB,
          db: deepClone(template),
          tools: AIRLINE_TOOLS,
          docs,
        }),
      }),
  };
};
