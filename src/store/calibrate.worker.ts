// Calibration worker: fits one set of trace files against a config and posts the one result
// (calibrate_job.ts); the panel terminates it when new files replace the old.

import { type CalibrateMessage, type CalibrateRequest, runCalibration } from './calibrate_job';

interface Scope {
  onmessage: ((ev: MessageEvent<CalibrateRequest>) => void) | null;
  postMessage(m: CalibrateMessage): void;
}
const scope = self as unknown as Scope;

scope.onmessage = (ev) => {
  void runCalibration(ev.data).then((m) => scope.postMessage(m));
};
