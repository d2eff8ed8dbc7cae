// The raw timeline's test hooks, for test builds only (make bench, e2e): ms from the
// sandbox's `sentAt` stamp to the event reaching the mission window and to its card
// being in the DOM, the first and last `sentAt` of live events (the rate really sent),
// how many messages and draws the window has had, why following stopped, and every
// event id held. They are `window.__casebook*` globals, installed only when the app
// says it was built with test hooks; until then nothing is recorded but the tally.
import { api } from "../../lib/api";
import type { StoredEvent } from "../../lib/bindings";
import { sentAtOf } from "../../lib/mission";
import { forgetOldest } from "../../lib/pages";

/** What the hooks read of the timeline, each time a test asks. */
export type TimelineProbe = {
  sessionId: () => string;
  /** How many events the mission has. */
  count: () => number;
  /** How many events the window holds. */
  held: () => number;
  /** Where the list stands (`drawWaiting`: events arrived that the next draw shows). */
  view: () => {
    follow: boolean;
    top: number;
    scrollTop: number;
    total: number;
    viewport: number;
    drawWaiting: boolean;
  };
};

export class TimelineHooks {
  private on = false;
  /** Channel messages and draws. */
  readonly tally = { messages: 0, draws: 0 };
  /** Why following stopped, each time (a test that lost it says how). */
  private readonly followStops: string[] = [];
  private readonly arrival: number[] = [];
  private readonly latency: number[] = [];
  private readonly sentSpan: [number, number] = [Infinity, -Infinity];
  /** Events that arrived live and whose card has not been on screen yet. */
  private readonly pendingLatency = new Map<number, number>();

  /** `pendingKept`: how many such events are remembered; cards that scrolled past
   *  before a frame was drawn never get timed. */
  constructor(private readonly pendingKept: number) {}

  /** An event that arrived live. */
  arrived(ev: StoredEvent): void {
    const sent = this.on ? sentAtOf(ev) : null;
    if (sent === null) return;
    this.pendingLatency.set(ev.seq, sent);
    forgetOldest(this.pendingLatency, this.pendingKept);
    this.arrival.push(Date.now() - sent);
    this.sentSpan[0] = Math.min(this.sentSpan[0], sent);
    this.sentSpan[1] = Math.max(this.sentSpan[1], sent);
  }

  /** An event's card is in the DOM. */
  shown(seq: number): void {
    const sent = this.pendingLatency.get(seq);
    if (sent !== undefined) {
      this.pendingLatency.delete(seq);
      this.latency.push(Date.now() - sent);
    }
  }

  /** Following stopped; `why` is only asked for in a test build. */
  followStopped(why: () => string): void {
    if (this.on) this.followStops.push(why());
  }

  /** Asks the app whether it is a test build and, if so, installs the globals. */
  installInTestBuilds(probe: TimelineProbe): void {
    void api
      .appInfo()
      .then((info) => {
        if (info.testHooks) this.install(probe);
      })
      .catch(() => {});
  }

  private install(probe: TimelineProbe): void {
    this.on = true;
    Object.assign(window, {
      __casebookArrival: this.arrival,
      __casebookLatency: this.latency,
      __casebookSentSpan: this.sentSpan,
      __casebookTally: this.tally,
      // Every event id of the mission, in order, read through the same pages.
      __casebookMission: {
        ids: async () => {
          const ids: string[] = [];
          for (;;) {
            const got = await api.missionEvents(probe.sessionId(), { kind: null, search: null }, ids.length, 2000);
            ids.push(...got.events.map((e) => e.event.id ?? `#${e.seq}`));
            if (got.events.length === 0 || ids.length >= got.total) return ids;
          }
        },
        count: probe.count,
        held: probe.held,
        view: probe.view,
        followStops: () => this.followStops,
      },
    });
  }
}
