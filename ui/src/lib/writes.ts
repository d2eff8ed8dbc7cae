/**
 * Orders reads against writes: a read that started before a write may carry the
 * state from before it, and must not overwrite what the write answered.
 */
export class WriteClock {
  private writes = 0;

  /** Call when a write starts. */
  write(): void {
    this.writes++;
  }

  /** Call when a read starts; the answer tells, when it lands, whether it is still current. */
  read(): () => boolean {
    const at = this.writes;
    return () => this.writes === at;
  }
}
