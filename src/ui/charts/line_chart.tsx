// A small d3 line chart (SVG) used for memory over time and the live loss curve: d3 scales and
// axes, one path per series, optional points. Series colours come from the shared palette.

import { useEffect, useRef } from 'react';
import { axisBottom, line, max, min, scaleLinear, select } from 'd3';
import type { ByteTicks } from '../ui_format';
import { yAxisOf } from './y_axis';

export interface Series {
  readonly key: string;
  readonly label: string;
  readonly color: string;
  readonly x: readonly number[];
  readonly y: readonly number[];
  readonly step?: boolean; // step curve (memory changes at events)
  readonly points?: boolean;
}

/** A horizontal reference line (the HBM capacity), inside the y domain, labelled at its right end. */
export interface RefLine {
  readonly key: string;
  readonly y: number;
  readonly label: string;
  readonly color: string;
}

interface Props {
  readonly series: readonly Series[];
  readonly refLines?: readonly RefLine[];
  readonly height?: number;
  readonly xFormat: (v: number) => string;
  readonly yFormat: (v: number) => string;
  /** Ticks of a y axis in a unit other than the values' (sizes: round GiB, not round bytes); else d3's. */
  readonly yTicks?: (lo: number, hi: number, count: number) => ByteTicks;
  readonly yFromZero?: boolean;
  readonly testId?: string;
}

const MARGIN = { top: 8, right: 12, bottom: 22, left: 64 };

type Root = ReturnType<typeof select<SVGSVGElement, unknown>>;
type Scale = (v: number) => number;
type Point = [number, number];

function drawRefLines(root: Root, lines: readonly RefLine[], y: Scale, x0: number, x1: number): void {
  for (const l of lines) {
    const g = root.append('g').attr('class', 'ref-line').attr('data-ref', l.key);
    g.append('line')
      .attr('x1', x0)
      .attr('x2', x1)
      .attr('y1', y(l.y))
      .attr('y2', y(l.y))
      .attr('stroke', l.color)
      .attr('stroke-width', 1.5)
      .attr('stroke-dasharray', '6 3');
    g.append('text')
      .attr('x', x1 - 2)
      .attr('y', y(l.y) - 3)
      .attr('text-anchor', 'end')
      .attr('fill', l.color)
      .attr('font-size', 10)
      .text(l.label);
  }
}

export function LineChart(props: Props) {
  const { series, refLines = [], height = 150, xFormat, yFormat, yTicks, yFromZero = true, testId } = props;
  const ref = useRef<SVGSVGElement>(null);
  useEffect(() => {
    const svg = ref.current;
    if (!svg) return;
    const draw = () => drawChart(svg, { series, refLines, height, xFormat, yFormat, yTicks, yFromZero });
    draw();
    const ro = new ResizeObserver(draw);
    if (svg.parentElement) ro.observe(svg.parentElement);
    return () => ro.disconnect();
  }, [series, refLines, height, xFormat, yFormat, yTicks, yFromZero]);
  return (
    <div className="chart">
      <svg ref={ref} data-testid={testId} />
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

/** What one drawing reads: the props, defaults filled in. */
type ChartSpec = Required<Omit<Props, 'yTicks' | 'testId'>> & Pick<Props, 'yTicks'>;

/** Redraws the chart from scratch at its parent's width (at least 200 px). */
function drawChart(svg: SVGSVGElement, c: ChartSpec): void {
  const { series, refLines, height } = c;
  const width = Math.max(200, svg.parentElement?.clientWidth ?? 400);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  const root = select(svg);
  root.selectAll('*').remove();
  const xs = series.flatMap((s) => s.x);
  const ys = [...series.flatMap((s) => s.y), ...refLines.map((l) => l.y)];
  if (!xs.length) {
    root
      .append('text')
      .attr('x', width / 2)
      .attr('y', height / 2)
      .attr('text-anchor', 'middle')
      .attr('class', 'chart-empty')
      .text('no data yet');
    return;
  }
  const x = scaleLinear()
    .domain([min(xs) ?? 0, Math.max(max(xs) ?? 1, (min(xs) ?? 0) + 1e-9)])
    .range([MARGIN.left, width - MARGIN.right]);
  const { y, axis: yAxis } = yAxisOf(
    c.yFromZero ? 0 : (min(ys) ?? 0),
    max(ys) ?? 1,
    [height - MARGIN.bottom, MARGIN.top],
    c,
  );
  root
    .append('g')
    .attr('class', 'chart-axis')
    .attr('transform', `translate(0,${height - MARGIN.bottom})`)
    .call(
      axisBottom(x)
        .ticks(Math.max(2, Math.floor(width / 90)))
        .tickFormat((d) => c.xFormat(Number(d))),
    );
  root.append('g').attr('class', 'chart-axis').attr('transform', `translate(${MARGIN.left},0)`).call(yAxis);
  drawRefLines(root, refLines, y, MARGIN.left, width - MARGIN.right);
  for (const s of series) drawSeries(root, s, x, y);
}

/** One series: its path (a step curve holds each value until the next x) and, when asked, its points. */
function drawSeries(root: Root, s: Series, x: Scale, y: Scale): void {
  const pts = s.x.map((xv, i) => [xv, s.y[i]] as Point);
  const path: Point[] = [];
  if (s.step) {
    pts.forEach((p, i) => {
      if (i > 0) path.push([p[0], pts[i - 1][1]]);
      path.push(p);
    });
  } else path.push(...pts);
  root
    .append('path')
    .attr('class', 'series')
    .attr('data-series', s.key)
    .attr('fill', 'none')
    .attr('stroke', s.color)
    .attr('stroke-width', 1.6)
    .attr(
      'd',
      line<Point>()
        .x((d) => x(d[0]))
        .y((d) => y(d[1]))(path) ?? '',
    );
  if (s.points) {
    root
      .append('g')
      .attr('data-points', s.key)
      .selectAll('circle')
      .data(pts)
      .join('circle')
      .attr('cx', (d) => x(d[0]))
      .attr('cy', (d) => y(d[1]))
      .attr('r', 2.5)
      .attr('fill', s.color);
  }
}
