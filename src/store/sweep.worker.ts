// Sweep worker: simulates the points of a sweep off the main thread, posting each point's rows as
// it finishes (the panel's progress bar and plots grow as they come; Stop terminates the worker).

import { runPoints, type SweepMessage, type SweepRequest } from './sweep_runner';

interface Scope {
  onmessage: ((ev: MessageEvent<SweepRequest>) => void) | null;
  postMessage(m: SweepMessage): void;
}
const scope = self as unknown as Scope;

scope.onmessage = (ev) => {
  // nothing to yield to in a worker: the main thread stops it by terminating it
  void runPoints(
    ev.data,
    (m) => scope.postMessage(m),
    () => false,
    async () => {},
  );
};
