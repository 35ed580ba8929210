export { findFindings, detectEngine, resolveThresholds } from './findFindings.js';
export * from './finding.js';
