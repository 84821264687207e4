// Loss of the live run, one point per step.

import { useMemo } from 'react';
import { useApp } from '../use_app';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { LineChart } from './line_chart';
import { fixed } from '../../util';

const fmtStep = (v: number) => String(Math.round(v));
const fmtLoss = (v: number) => fixed(v, 2);

export function LossChart() {
  const losses = useApp((s) => s.live.losses);
  const palette = paletteFor(useResolvedTheme());
  const series = useMemo(
    () => [
      {
        key: 'loss',
        label: 'training loss (mean over ranks)',
        color: palette.all_gather,
        points: true,
        x: losses.map((p) => p.step),
        y: losses.map((p) => p.loss),
      },
    ],
    [losses, palette],
  );
  return (
    <section className="panel">
      <h2>Loss (live run)</h2>
      <LineChart series={series} xFormat={fmtStep} yFormat={fmtLoss} yFromZero={false} testId="loss-chart" />
    </section>
  );
}
