// The kinds of a mission's events and how many of each, for the raw timeline's kind
// filter. Plain maps, not deep state: `version` says when the filter should read them
// again, which is at once for a new kind and otherwise on the filter's own tick.
import type { KindCount, StoredEvent } from "../../lib/bindings";

export class EventKinds {
  readonly counts = new Map<string, number>();
  readonly labels = new Map<string, string>();
  // The kind filter's counts follow the mission once a second (and when the list is
  // opened), not every draw: its options are DOM too.
  version = $state(0);

  /** An event as it arrives: a new kind shows in the filter at once; counts follow on
   *  the second's tick. */
  add(ev: StoredEvent): void {
    const name = ev.event.event;
    if (!this.counts.has(name)) this.version += 1;
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    this.labels.set(name, ev.label);
  }

  /** The mission's kinds as SQL counts them. */
  load(kinds: KindCount[]): void {
    for (const k of kinds) {
      this.counts.set(k.event, k.count);
      this.labels.set(k.event, k.label);
    }
    this.version += 1;
  }

  /** No kinds, before a (new) subscription. */
  clear(): void {
    this.counts.clear();
    this.version += 1;
  }
}
