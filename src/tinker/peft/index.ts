export {
  type BaseModel,
  type ConvertInput,
  convertToPeft,
  type PeftAdapter,
  type PeftConfig,
} from './convert.js';
export { detectFamily, FAMILIES, type FamilyId, type FamilyProfile } from './families.js';
export { readBaseModelDir, readRawAdapter, writePeftAdapter } from './folder.js';
