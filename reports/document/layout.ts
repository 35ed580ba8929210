/** How much of each table the report document shows. Defaults: `DEFAULT_REPORT_LAYOUT`. */
export interface ReportLayout {
  /** Rows of the top-kernels, top-gaps and NVTX tables. */
  top: number;
  /** Up to this many iterations are listed one by one; above it, only the slowest. */
  iterationRows: number;
  /** Iterations listed (slowest wall time first) when there are more than `iterationRows`. */
  slowest: number;
  /**
   * Whether the sections hold their charts. `renderReport` leaves them out of a Markdown report,
   * which draws none: their data is a pass over every iteration's categories and gaps.
   */
  charts: boolean;
}

export const DEFAULT_REPORT_LAYOUT: Readonly<ReportLayout> = Object.freeze({ top: 10, iterationRows: 40, slowest: 20, charts: true });
