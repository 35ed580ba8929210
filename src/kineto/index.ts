export { convertKinetoTrace, microsToNs, packGlobalTid, KINETO_PRODUCT_NAME, type ConversionSummary } from './convert.js';
export { convertKinetoTraceSync, type ConvertedTrace } from './convertSync.js';
export { readKinetoTrace, type KinetoEvent, type KinetoHeader } from './readKineto.js';
