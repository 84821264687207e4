// The config panel's model: its sections in order and, per field, the control, the label and the
// help, all read from the config's knob table (CONFIG_FIELDS, FIELD_GROUPS). The panel declares no
// knob, range or help of its own (docs/ARCHITECTURE.md §4).

import { CONFIG_FIELDS, FIELD_GROUPS, describeAllowed, type FieldGroup, type FieldSpec } from '../config';
import { knobTooltip } from './glossary';

export interface PanelField {
  readonly field: FieldSpec;
  /** select: an enum; checkbox: a boolean; text: a number, committed when it parses and is allowed. */
  readonly control: 'select' | 'checkbox' | 'text';
  /** What it does, what raising it costs, torch's name, the allowed values (the row's, worded). */
  readonly help: string;
}

export interface PanelSection {
  readonly title: string;
  readonly fields: readonly PanelField[];
}

const controlOf = (f: FieldSpec): PanelField['control'] =>
  f.kind === 'enum' ? 'select' : f.kind === 'bool' ? 'checkbox' : 'text';

/** The panel's sections, in FIELD_GROUPS order; a section with no field is left out. */
export function configPanelModel(fields: readonly FieldSpec[] = CONFIG_FIELDS): PanelSection[] {
  return (Object.entries(FIELD_GROUPS) as [FieldGroup, string][])
    .map(([id, title]) => ({
      title,
      fields: fields
        .filter((f) => f.group === id)
        .map((f) => ({ field: f, control: controlOf(f), help: knobTooltip(f.path, describeAllowed(f)) })),
    }))
    .filter((s) => s.fields.length > 0);
}
