// Config panel: one control per SimConfig field, drawn from its model (config_panel_model.ts: the
// config's knob table, grouped). Enums are selects, booleans checkboxes, numbers text fields that
// commit on Enter / blur / a short pause; a value validateConfig refuses stays in the field
// with its message and the last good config keeps running.

import { Fragment, type ReactNode, useEffect, useRef, useState } from 'react';
import { describeAllowed, getPath, type FieldSpec } from '../../config';
import { appStore } from '../../store';
import { useApp } from '../use_app';
import { configPanelModel, type PanelField } from '../config_panel_model';
import { backendFlagsHelp } from '../glossary';

const COMMIT_DELAY_MS = 400;

function testId(path: string): string {
  return `cfg-${path.replace(/\./g, '-')}`;
}

/** Text → value for a numeric field: '' is null where allowed; anything else must parse as a number. */
function parseNumeric(f: FieldSpec, text: string): { ok: true; value: number | null } | { ok: false; message: string } {
  const t = text.trim();
  const nullable = (f.kind === 'int' || f.kind === 'number') && f.nullable;
  const mustBe = `${f.path} must be ${describeAllowed(f)}`;
  if (t === '') return nullable ? { ok: true, value: null } : { ok: false, message: `${mustBe}, got an empty field` };
  const v = Number(t);
  if (!Number.isFinite(v)) return { ok: false, message: `${mustBe}, got ${JSON.stringify(text)}` };
  return { ok: true, value: v };
}

function NumberField({ f, value, error }: { f: FieldSpec; value: unknown; error?: string }) {
  const [draft, setDraft] = useState(value === null || value === undefined ? '' : String(value));
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastCommitted = useRef(value);
  useEffect(() => {
    // the config changed from elsewhere (URL, reset): show it, unless this field holds a refused value
    if (value !== lastCommitted.current && !error) setDraft(value === null || value === undefined ? '' : String(value));
    lastCommitted.current = value;
  }, [value, error]);
  const commit = (text: string) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    const p = parseNumeric(f, text);
    const st = appStore.getState();
    if (!p.ok) {
      appStore.setState({ fieldErrors: { ...st.fieldErrors, [f.path]: p.message } });
      return;
    }
    if (p.value === getPath(st.config, f.path) && !st.fieldErrors[f.path]) return;
    lastCommitted.current = p.value;
    st.setField(f.path, p.value);
  };
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const nullable = (f.kind === 'int' || f.kind === 'number') && f.nullable;
  return (
    <input
      type="text"
      inputMode="decimal"
      value={draft}
      placeholder={nullable ? 'preset' : ''}
      aria-invalid={!!error}
      data-testid={testId(f.path)}
      className={error ? 'invalid' : ''}
      onChange={(e) => {
        setDraft(e.target.value);
        if (timer.current) clearTimeout(timer.current);
        const text = e.target.value;
        timer.current = setTimeout(() => commit(text), COMMIT_DELAY_MS);
      }}
      onBlur={(e) => commit(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit((e.target as HTMLInputElement).value);
      }}
    />
  );
}

const PRESET_DEFAULT_LABEL = 'preset default';

/** 'max_memory_increase_gb' with a break chance after each '_': long knob names wrap, never cut. */
function wrappable(label: string): ReactNode {
  const parts = label.split('_');
  return parts.map((p, i) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed label, in order
    <Fragment key={i}>
      {p}
      {i < parts.length - 1 && (
        <>
          _<wbr />
        </>
      )}
    </Fragment>
  ));
}

/** The FX graph both sides ran, when they came from an FX import rather than the config's model. */
function useFxGraph(): string | undefined {
  return useApp((s) => {
    const fx = s.sides.a?.fxGraph;
    return fx !== undefined && fx === s.sides.b?.fxGraph ? fx : undefined;
  });
}

/** The model select: an FX import shows as the current model until a preset is picked (which runs it). */
function ModelSelect({ f, value }: { f: FieldSpec & { kind: 'enum' }; value: unknown }) {
  const fx = useFxGraph();
  const pick = (v: string) => {
    const st = appStore.getState();
    if (fx !== undefined && v === st.config.model)
      void st.resimulate(st.config); // same preset: run it again
    else st.setField(f.path, v);
  };
  return (
    <select
      value={fx !== undefined ? '' : String(value)}
      data-testid={testId(f.path)}
      onChange={(e) => pick(e.target.value)}
    >
      {fx !== undefined && (
        <option value="" disabled>
          FX graph: {fx}
        </option>
      )}
      {f.values.map((v) => (
        <option key={v} value={v}>
          {v}
        </option>
      ))}
    </select>
  );
}

/** Says plainly what an FX import replaced and that the URL cannot hold it. */
function FxImportNote() {
  const fx = useFxGraph();
  if (fx === undefined) return null;
  const st = appStore.getState();
  return (
    <p className="small banner info fx-note" data-testid="cfg-fx-import" role="note">
      Current model: the imported FX graph <code>{fx}</code>, run with this config's hardware, network and backend knobs
      (the model preset and its shape fields do not apply to it). The URL holds only the config: a reload or any config
      change runs the config again and drops the import.{' '}
      <button type="button" className="link" onClick={() => void st.resimulate(st.config)}>
        back to {st.config.model}
      </button>
    </p>
  );
}

function Field({ field: f, control: kind, help: rowHelp }: PanelField) {
  const value = useApp((s) => getPath(s.config, f.path));
  const error = useApp((s) => s.fieldErrors[f.path]);
  const [focused, setFocused] = useState(false);
  const flags = useApp((s) => backendFlagsHelp(f.path, s.config)); // a backend's torchtitan command line
  const help = [rowHelp, flags].filter(Boolean).join('\n');
  let control: ReactNode;
  if (f.kind === 'enum' && f.path === 'model') control = <ModelSelect f={f} value={value} />;
  else if (f.kind === 'enum') {
    // A nullable enum's null means "the preset decides" (e.g. the preset's torchtitan AC mode).
    control = (
      <select
        value={value === null ? '' : String(value)}
        data-testid={testId(f.path)}
        onChange={(e) => {
          appStore.getState().setField(f.path, f.nullable && e.target.value === '' ? null : e.target.value);
        }}
      >
        {f.nullable && <option value="">{PRESET_DEFAULT_LABEL}</option>}
        {f.values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === 'bool') {
    control = (
      <input
        type="checkbox"
        checked={value === true}
        data-testid={testId(f.path)}
        onChange={(e) => appStore.getState().setField(f.path, e.target.checked)}
      />
    );
  } else {
    control = <NumberField f={f} value={value} error={error} />;
  }
  return (
    // focus (a tap on the label or the control, or Tab) shows the knob's help under it
    <div
      className={`field ${kind === 'checkbox' ? 'field-bool' : kind === 'select' ? 'field-enum' : ''}`}
      data-field={f.path}
    >
      {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is {control}, inside the label */}
      <label title={help} onFocus={() => setFocused(true)} onBlur={() => setFocused(false)}>
        <span className="field-label">{wrappable(f.label)}</span>
        {control}
      </label>
      {focused && (
        <div className="field-help" data-testid={`${testId(f.path)}-help`}>
          {help}
        </div>
      )}
      {error && (
        <div className="field-error" role="alert" data-testid={`${testId(f.path)}-error`}>
          {error}
        </div>
      )}
    </div>
  );
}

export function ConfigPanel() {
  // labels, sections and help come with each field from the config's knob table
  const groups = configPanelModel();
  return (
    <section className="panel config" data-testid="config">
      <div className="config-head">
        <h2>Config</h2>
        <button
          type="button"
          className="link"
          onClick={() => appStore.getState().resetConfig()}
          data-testid="cfg-reset"
        >
          reset
        </button>
      </div>
      <FxImportNote />
      {groups.map((g) => (
        <fieldset key={g.title}>
          <legend>{g.title}</legend>
          {g.fields.map((p) => (
            <Field key={p.field.path} {...p} />
          ))}
        </fieldset>
      ))}
    </section>
  );
}
