// Config slice: the SimConfig every view derives from, edited field by field. A value the
// validator refuses stays in the field with its message; the config keeps its last good value.

import type { StoreApi } from 'zustand/vanilla';
import { DEFAULT_CONFIG, FIRST_SCREEN_CONFIG, setPath, validateConfig, type SimConfig } from '../config';

export interface ConfigSlice {
  readonly config: SimConfig;
  /** Field path ('ranks', 'autobucketing.max_in_flight_gb') → why its last input was refused. */
  readonly fieldErrors: Readonly<Record<string, string>>;
  /** Set one field by dotted path; returns true when the new config validated. */
  setField(path: string, value: unknown): boolean;
  setConfig(cfg: SimConfig): void;
  /** Back to the first screen's config (what a link without config keys opens). */
  resetConfig(): void;
}

/** A copy of cfg with the dotted path set to value (config's setPath on a clone: cfg is never changed). */
function withField(cfg: SimConfig, path: string, value: unknown): Record<string, unknown> {
  const next = structuredClone(cfg) as unknown as Record<string, unknown>;
  setPath(next, path, value);
  return next;
}

export function createConfigSlice<S extends ConfigSlice>(
  set: StoreApi<S>['setState'],
  get: () => S,
  onChange: (cfg: SimConfig) => void,
): ConfigSlice {
  const setPartial = (p: Partial<ConfigSlice>) => set(p as Partial<S>);
  const clearError = (path: string) => {
    const { [path]: _gone, ...rest } = get().fieldErrors;
    return rest;
  };
  return {
    config: DEFAULT_CONFIG,
    fieldErrors: {},
    setField: (path, value) => {
      let r: ReturnType<typeof validateConfig>;
      try {
        r = validateConfig(withField(get().config, path, value));
      } catch (e) {
        setPartial({ fieldErrors: { ...get().fieldErrors, [path]: (e as Error).message } });
        return false;
      }
      if (!r.ok) {
        setPartial({ fieldErrors: { ...get().fieldErrors, [path]: r.error.message } });
        return false;
      }
      setPartial({ config: r.value, fieldErrors: clearError(path) });
      onChange(r.value);
      return true;
    },
    setConfig: (cfg) => {
      setPartial({ config: cfg, fieldErrors: {} });
      onChange(cfg);
    },
    resetConfig: () => get().setConfig(FIRST_SCREEN_CONFIG), // what the page opens on
  };
}
