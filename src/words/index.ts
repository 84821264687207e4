// Public API of words/: the English for the engine's structured values (a backend's reasons, a
// collective mismatch, the culprit diff could not compute, a calibration's assumptions and what it
// left out, each side of a disagreement with torch's log). The engine layers emit codes and facts;
// the UI (through the store) and the CLI word them here, so the screen and the command
// line say the same thing (docs/ARCHITECTURE.md §4).

export { reasonText, wordedDiff } from './reason_words';
export { mismatchOpText, mismatchText, wordedSweepRow } from './mismatch_words';
export { culpritSkipText } from './culprit_words';
export { assumptionText, unfittedText, wordedCalibration } from './calibrate_words';
export { decisionText, logMismatchText, wordedAgreement } from './torch_log_words';
