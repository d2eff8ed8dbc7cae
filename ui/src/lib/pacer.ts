// Drawing at a bounded rate: asked for as often as data arrives, a draw happens at
// once when the last one is at least `gap` ago, else once when the gap is over.
// Timers, not animation frames: a hidden window gets no frames and must still catch up.
//
// A stream told of through `arrived` that comes faster than anyone reads (past FIREHOSE
// things a second) is drawn `firehoseGap` apart instead: at such rates each draw's
// repaint, not what it shows, is most of what a window costs (docs/performance.md).

/** Arrivals a second past which a stream is faster than anyone reads. */
export const FIREHOSE = 100;

export class Pacer {
  private last = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly arrivals: RateMeter;

  constructor(
    private readonly gap: number,
    private readonly draw: () => void,
    private readonly now: () => number = () => performance.now(),
    private readonly firehoseGap: number = gap,
  ) {
    this.arrivals = new RateMeter(now);
  }

  /** `n` things arrived: asks for a draw to show them. */
  arrived(n: number): void {
    this.arrivals.add(n);
    this.request();
  }

  /** Asks for a draw; asks while one is waiting cost nothing. */
  request(): void {
    if (this.timer !== null) return;
    const gap = this.arrivals.perSecond() > FIREHOSE ? this.firehoseGap : this.gap;
    const wait = this.last + gap - this.now();
    if (wait <= 0) this.run();
    else
      this.timer = setTimeout(() => {
        this.timer = null;
        this.run();
      }, wait);
  }

  /** Whether a draw is waiting for its gap to pass. */
  get waiting(): boolean {
    return this.timer !== null;
  }

  /** Draws now, instead of any draw waiting (something the reader did must show at once). */
  drawNow(): void {
    this.cancel();
    this.run();
  }

  /** Drops a waiting draw (the view is going away). */
  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): void {
    this.last = this.now();
    this.draw();
  }
}

/** How many things a second have been arriving, over about the last second: an average
 *  that forgets what came a second ago by a factor of e. */
export class RateMeter {
  private rate = 0;
  private at = -Infinity;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** `n` arrived now. */
  add(n: number): void {
    this.rate = this.perSecond() + n;
    this.at = this.now();
  }

  /** Arrivals a second, as of now. */
  perSecond(): number {
    const since = this.now() - this.at;
    return Number.isFinite(since) ? this.rate * Math.exp(-since / 1000) : 0;
  }
}
