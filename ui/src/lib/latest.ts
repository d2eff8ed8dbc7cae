// Asking as the reader types: every keystroke asks at once, and only the newest question
// is answered on screen. While one question is out, later ones wait for it, and of those
// only the newest is then asked: the ones typed past are abandoned, never sent, so a fast
// typist costs one query in flight, not a queue of them. Answers to a question that is no
// longer the newest are dropped, never drawn.
//
// `wait` (ms) asks only once typing has paused that long. The window's default is 0;
// benchmarks set 150, how search used to work, as the reference (`setSearchWait`).

let searchWait = 0;

/** How long searches wait for typing to pause before asking (test builds set it). */
export function setSearchWait(ms: number): void {
  searchWait = Math.max(0, ms);
}

export class Latest<Q, A> {
  private seq = 0;
  private inFlight = false;
  private next: { q: Q; seq: number } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly ask: (q: Q) => Promise<A>,
    private readonly answer: (a: A, q: Q) => void,
    private readonly fail: (e: unknown) => void,
    private readonly wait: () => number = () => searchWait,
  ) {}

  /** Asks `q` now (or once typing pauses, with a wait), abandoning any earlier question. */
  request(q: Q): void {
    const seq = ++this.seq;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const ms = this.wait();
    if (ms > 0)
      this.timer = setTimeout(() => {
        this.timer = null;
        this.send(q, seq);
      }, ms);
    else this.send(q, seq);
  }

  /** Drops every question asked and any answer still to come. */
  cancel(): void {
    this.seq += 1;
    this.next = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether a question is out or waiting to be asked. */
  get pending(): boolean {
    return this.inFlight || this.next !== null || this.timer !== null;
  }

  private send(q: Q, seq: number): void {
    if (this.inFlight) {
      this.next = { q, seq };
      return;
    }
    this.inFlight = true;
    this.ask(q).then(
      (a) => this.settle(() => seq === this.seq && this.answer(a, q)),
      (e) => this.settle(() => seq === this.seq && this.fail(e)),
    );
  }

  private settle(then: () => void): void {
    this.inFlight = false;
    const next = this.next;
    this.next = null;
    // A newer question waits: this answer is already out of date.
    if (next !== null && next.seq === this.seq) return this.send(next.q, next.seq);
    then();
  }
}
