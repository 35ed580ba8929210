/** Multi-rank analysis: several exports in worker threads, the cross-rank view, merge of summaries. */
export * from './expandInputs.js';
export * from './identify.js';
export * from './rankFigures.js';
export * from './crossRank.js';
export * from './merge.js';
export * from './tasks.js';
export * from './pool.js';
export * from './ranksFromExports.js';
