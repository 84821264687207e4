// One plot of a sweep: a figure (step time, exposed communication, peak memory, collectives)
// against the varied field, one line per series (backend, or backend × second field's value).
// d3 scales and axes on SVG; a point's circle says which sweep point it is, for hover and click.

import { useEffect, useRef } from 'react';
import {
  axisBottom,
  line,
  max,
  scaleLinear,
  scalePoint,
  select,
  type Axis,
  type NumberValue,
  type ScaleLinear,
  type Selection,
} from 'd3';
import type { ByteTicks } from '../ui_format';
import { yAxisOf } from './y_axis';

export interface SweepSeries {
  readonly key: string;
  readonly label: string;
  readonly color: string;
  /** x (a number, or a category's text), y and the sweep point of each plotted point. */
  readonly points: readonly {
    readonly x: number | string;
    readonly y: number;
    readonly point: number;
  }[];
}

interface Props {
  readonly title: string;
  readonly series: readonly SweepSeries[];
  readonly xLabel: string;
  readonly yFormat: (v: number) => string;
  /** Ticks of the y axis in a unit other than the values' (sizes: round GiB, not round bytes); else d3's. */
  readonly yTicks?: (lo: number, hi: number, count: number) => ByteTicks;
  readonly testId: string;
  readonly hovered: number | null;
  onHover(point: number | null): void;
  onPick(point: number): void;
}

const MARGIN = { top: 8, right: 12, bottom: 36, left: 60 };
const HEIGHT = 160;

/** x scale: linear when every x is a number, else one slot per category in first-seen order. */
function xScaleOf(xs: readonly (number | string)[], left: number, right: number): (v: number | string) => number {
  if (xs.every((v) => typeof v === 'number')) {
    const nums = xs as number[];
    const lo = Math.min(...nums);
    const hi = Math.max(...nums);
    const s = scaleLinear()
      .domain([lo, hi > lo ? hi : lo + 1])
      .range([left, right]);
    return (v) => s(v as number);
  }
  const s = scalePoint<string>()
    .domain([...new Set(xs.map(String))])
    .range([left, right])
    .padding(0.3);
  return (v) => s(String(v)) ?? left;
}

type Root = Selection<SVGSVGElement, unknown, null, undefined>;
type YScale = ScaleLinear<number, number>;
type Point = SweepSeries['points'][number];
type Draw = Omit<Props, 'title' | 'testId'>;

/** The x axis (numbers: linear ticks, else one per category) with its label, and the y axis. */
function drawAxes(
  root: Root,
  xs: readonly (number | string)[],
  yAxis: Axis<NumberValue>,
  width: number,
  d: Draw,
): void {
  const numeric = xs.every((v) => typeof v === 'number');
  const xAxis = numeric
    ? axisBottom(
        scaleLinear()
          .domain([Math.min(...(xs as number[])), Math.max(...(xs as number[]))])
          .range([MARGIN.left, width - MARGIN.right]),
      ).ticks(Math.max(2, Math.floor(width / 80)))
    : axisBottom(
        scalePoint<string>()
          .domain([...new Set(xs.map(String))])
          .range([MARGIN.left, width - MARGIN.right])
          .padding(0.3),
      );
  root
    .append('g')
    .attr('class', 'chart-axis')
    .attr('transform', `translate(0,${HEIGHT - MARGIN.bottom})`)
    .call(xAxis as never);
  root
    .append('text')
    .attr('class', 'chart-axis-label')
    .attr('x', width - MARGIN.right)
    .attr('y', HEIGHT - 2)
    .attr('text-anchor', 'end')
    .text(d.xLabel);
  root.append('g').attr('class', 'chart-axis').attr('transform', `translate(${MARGIN.left},0)`).call(yAxis);
}

/** One series: its line, and a circle per point that hovers and picks its sweep point. */
function drawSeries(root: Root, s: SweepSeries, x: (v: number | string) => number, y: YScale, d: Draw): void {
  const ok = s.points.filter((p) => Number.isFinite(p.y));
  root
    .append('path')
    .attr('class', 'series')
    .attr('data-series', s.key)
    .attr('fill', 'none')
    .attr('stroke', s.color)
    .attr('stroke-width', 1.8)
    .attr(
      'd',
      line<Point>()
        .x((p) => x(p.x))
        .y((p) => y(p.y))(ok) ?? '',
    );
  root
    .append('g')
    .attr('data-points', s.key)
    .selectAll('circle')
    .data(ok)
    .join('circle')
    .attr('cx', (p) => x(p.x))
    .attr('cy', (p) => y(p.y))
    .attr('fill', s.color)
    .attr('r', (p) => (p.point === d.hovered ? 6 : 4))
    .attr('data-point', (p) => p.point)
    .attr('class', 'sweep-point')
    .style('cursor', 'pointer')
    .on('mouseenter', (_e, p) => d.onHover(p.point))
    .on('mouseleave', () => d.onHover(null))
    .on('click', (_e, p) => d.onPick(p.point))
    .append('title')
    .text((p) => `${s.label}: ${d.xLabel} = ${p.x} → ${d.yFormat(p.y)} (click to load)`);
}

/** The whole plot at the width of the svg's parent (nothing but the size when no point is finite). */
function drawSweep(svg: SVGSVGElement, d: Draw): void {
  const width = Math.max(220, svg.parentElement?.clientWidth ?? 400);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(HEIGHT));
  const root = select(svg);
  root.selectAll('*').remove();
  const pts = d.series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.y)));
  if (!pts.length) return;
  const xs = d.series.flatMap((s) => s.points.map((p) => p.x));
  const x = xScaleOf(xs, MARGIN.left, width - MARGIN.right);
  const top = max(pts, (p) => p.y) || 1;
  const { y, axis } = yAxisOf(0, top, [HEIGHT - MARGIN.bottom, MARGIN.top], d);
  drawAxes(root, xs, axis, width, d);
  for (const s of d.series) drawSeries(root, s, x, y, d);
}

export function SweepChart({ title, series, xLabel, yFormat, yTicks, testId, hovered, onHover, onPick }: Props) {
  const ref = useRef<SVGSVGElement>(null);
  useEffect(() => {
    const svg = ref.current;
    if (!svg) return;
    const draw = () => drawSweep(svg, { series, xLabel, yFormat, yTicks, hovered, onHover, onPick });
    draw();
    const ro = new ResizeObserver(draw);
    if (svg.parentElement) ro.observe(svg.parentElement);
    return () => ro.disconnect();
  }, [series, xLabel, yFormat, yTicks, hovered, onHover, onPick]);
  return (
    <div className="chart sweep-chart">
      <h3 className="small">{title}</h3>
      <svg ref={ref} data-testid={testId} role="img" aria-label={`${title} against ${xLabel}`} />
      <div className="chart-legend">
        {series.map((s) => (
          <span key={s.key}>
            <i style={{ background: s.color }} />
            {s.label}
          </span>
        ))}
      </div>
    </div>
  );
}
