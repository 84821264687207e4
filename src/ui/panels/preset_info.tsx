// "What the preset assumes": the hardware and network constants the cost model times this config
// with, each beside the public measurement it comes from (src/estimate/preset_sources.ts), so a
// reader can tell a modelled figure from a measured one. Shown inside the explain panel.

import { useMemo } from 'react';
import { hardwareAssumptions, HARDWARE_PRESETS, networkAssumptions, type Assumption } from '../../estimate';
import { networkFor } from '../../store';
import { useApp } from '../use_app';

function Rows({ rows, group }: { readonly rows: readonly Assumption[]; readonly group: string }) {
  return (
    <>
      {rows.map((r) => (
        <tr key={`${group}:${r.key}`} data-assumption={`${group}:${r.key}`}>
          <th scope="row">{r.label}</th>
          <td>
            <span className="value">{r.value}</span>
            <span className="source muted">{r.source}</span>
          </td>
        </tr>
      ))}
    </>
  );
}

export function PresetAssumptions() {
  const cfg = useApp((s) => s.config);
  const hw = useMemo(() => hardwareAssumptions(HARDWARE_PRESETS[cfg.hardware]), [cfg.hardware]);
  const overridden = cfg.bandwidthGBps !== null || cfg.latencyUs !== null;
  const net = useMemo(() => networkAssumptions(networkFor(cfg), overridden), [cfg, overridden]);
  return (
    <details className="preset-info" data-testid="preset-info">
      <summary>
        What the preset assumes: <code>{cfg.hardware}</code> + <code>{cfg.network}</code>
      </summary>
      <table className="small">
        <thead>
          <tr>
            <th>constant</th>
            <th>value · source</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th colSpan={2} scope="rowgroup">
              hardware (one set per GPU, never per model or run)
            </th>
          </tr>
          <Rows rows={hw} group="hardware" />
          <tr>
            <th colSpan={2} scope="rowgroup">
              network
            </th>
          </tr>
          <Rows rows={net} group="network" />
        </tbody>
      </table>
    </details>
  );
}
