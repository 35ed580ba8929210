/**
 * The layering of iterscope, as data: the floors from the bottom up, each naming the folders (or
 * single modules) on it. A module may import
 * - a module of its own folder;
 * - any module on a lower floor;
 * - on its own floor, a folder listed before its own (the floor's folders are in order, lowest
 *   first), or any folder of the floor when the floor says `peers` (folders that call each other
 *   through code that no circle joins: the loader starts its workers, the workers run the loader).
 * Every module of src/, queries/ and reports/ must be on a floor: a new folder is placed here.
 * A path ending in '/' is a folder (and its sub-folders, unless they have their own entry); the
 * longest matching entry places a module. Checked by floors.test.ts on every `npm test`.
 */
export interface Floor {
  name: string;
  /** What lives on it (the README's layout section draws the same). */
  about: string;
  rooms: readonly string[];
  peers?: boolean;
}

export const FLOORS: readonly Floor[] = [
  {
    name: 'base',
    about: 'errors, exit codes, option files, units, numbers and typed columns, the V8 settings, the memory budget: no knowledge of exports',
    rooms: [
      'src/errors.ts',
      'src/builtEntry.ts',
      'src/progress.ts',
      'src/userRegex.ts',
      'src/optionValues.ts',
      'src/optionFile.ts',
      'src/outputFile.ts',
      'src/formatNs.ts',
      'src/formatRanges.ts',
      'src/memoryBudget.ts',
      // Typed columns below the math: the duration statistics keep their values in a column of ids.
      'src/columns/',
      'src/math/',
      'src/v8/',
    ],
  },
  { name: 'inputs', about: 'iteration logs and kernel category rules: text the user gives beside the export', rooms: ['src/logs/', 'src/categories/'] },
  { name: 'queries', about: 'all SQL (kysely), over an open export handle', rooms: ['queries/'] },
  {
    name: 'ground',
    about: 'opening and checking an export: nsys-rep and Kineto JSON turned into SQLite, the contract of columns read, the excluded-row checks',
    rooms: ['src/kineto/trace/', 'src/kineto/convert/', 'src/export/'],
  },
  {
    name: 'load',
    about: 'the loaded export and its column readers (one module per table family), and the worker threads that read beside it',
    rooms: ['src/load/', 'src/worker/'],
    peers: true,
  },
  {
    name: 'parts',
    about: 'analyses: pure computations over the loaded columns and over each other',
    rooms: ['src/iterations/', 'src/analysis/', 'src/metrics/', 'src/gaps/', 'src/layers/', 'src/kineto/', 'src/findings/', 'src/overview/'],
  },
  {
    name: 'pipeline',
    about: 'analyzeExport: the parts registry, the plan, one load; what the NVTX worker computes and when it runs',
    rooms: ['src/pipeline/', 'src/worker/policy.ts', 'src/worker/backgroundParts.ts', 'src/worker/backgroundWorker.ts'],
    peers: true,
  },
  { name: 'runs', about: 'what is made of analyses: run summaries, traces, several exports, comparisons', rooms: ['src/summary/', 'src/trace/', 'src/ranks/', 'src/compare/'] },
  { name: 'reports', about: 'all presentation: tables, Markdown, CSV, JSON, HTML', rooms: ['reports/'] },
  { name: 'entries', about: 'the CLI (parses options, prints) and the library (src/index.ts names its exports)', rooms: ['src/cli/', 'src/index.ts'] },
];

/**
 * Rooms only some others may import, whatever their floors: all SQL is read through the ground
 * floor (and written there, by the Kineto converter) and the loader (the parts read loaded columns,
 * never the export; the worker threads run the loader's readers and take the handle's type from the
 * ground floor); the library names the handle's type.
 */
export const ONLY_FROM: Readonly<Record<string, readonly string[]>> = {
  'queries/': ['src/export/', 'src/kineto/convert/', 'src/load/', 'src/index.ts'],
};

/** Rooms whose code may read a loaded export's open handle (`loaded.handle`): the loader's own. */
export const HANDLE_READERS: readonly string[] = ['src/export/', 'src/kineto/convert/', 'src/load/', 'src/worker/'];
