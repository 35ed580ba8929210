/**
 * What a loader's scan finds of the launch ids it reads (`GpuOpColumns.launchIds`,
 * `ApiCallColumns.launchIds`): `upper`, the bits above the PID (`id >> 48`: hardware and VM ids)
 * every row shares (null: no row), and `irregular`, whether some row has no such bits (a NULL id,
 * or a GPU op's thread part other than 0) or others. The NVTX GPU projection joins launches from
 * the columns, which keep only the PID, only when no id is irregular.
 */
export interface LaunchIds {
  upper: number | null;
  irregular: boolean;
}

/** `LaunchIds` as a scan sees its rows' upper bits one by one (null: the row's id is irregular). */
export class LaunchIdCheck {
  private upper: number | null = null;
  private irregular = false;

  see(up: number | null): void {
    if (up === null) this.irregular = true;
    else if (this.upper === null) this.upper = up;
    else if (up !== this.upper) this.irregular = true;
  }

  result(): LaunchIds {
    return { upper: this.upper, irregular: this.irregular };
  }
}
