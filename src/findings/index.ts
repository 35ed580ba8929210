export { findFindings, detectEngine, resolveThresholds } from './findFindings.js';
export * from './types.js';
