// The interactive time-series chart (uPlot: canvas, made for large series). Drag to zoom,
// Shift+drag or the wheel to pan and zoom, double-click to reset; the legend shows the values
// under the crosshair and toggles a series on click. Gaps are nulls, drawn as breaks.
// What the chart holds is published on `window.__flexConsole.chart` (and the canvas's container
// carries data-* attributes) so tests and benchmarks can compare it with the API's answer.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Aligned } from '../data/series.ts';
import { publish } from '../app/debugHook.ts';

export interface SeriesStyle {
  label: string;
  color: string;
  dashed?: boolean;
}

export interface ViewWindow {
  min: number;
  max: number;
  /** Indexes (into the input series) currently shown. */
  shown: number[];
}

interface Props {
  aligned: Aligned;
  series: readonly SeriesStyle[];
  /** Performance mark name set when the response arrived (for the draw timing). */
  responseMark?: string;
  onView?: (view: ViewWindow) => void;
}

const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

/** Shift+drag pans, the wheel zooms around the cursor (uPlot zooms by drag-select itself). */
function panAndWheel(): uPlot.Plugin {
  return {
    hooks: {
      ready(u) {
        const over = u.over;
        over.addEventListener(
          'wheel',
          (e) => {
            e.preventDefault();
            const { min, max } = u.scales.x!;
            if (min === undefined || max === undefined) return;
            const at = u.posToVal(u.cursor.left ?? over.clientWidth / 2, 'x');
            const factor = e.deltaY < 0 ? 0.75 : 1 / 0.75;
            u.setScale('x', { min: at - (at - min) * factor, max: at + (max - at) * factor });
          },
          { passive: false },
        );
        over.addEventListener('mousedown', (e) => {
          if (!e.shiftKey) return;
          e.stopPropagation();
          const { min, max } = u.scales.x!;
          if (min === undefined || max === undefined) return;
          const startX = e.clientX;
          const perPx = (max - min) / over.clientWidth;
          const move = (m: MouseEvent) => {
            const shift = (m.clientX - startX) * perPx;
            u.setScale('x', { min: min - shift, max: max - shift });
          };
          const up = () => {
            removeEventListener('mousemove', move);
            removeEventListener('mouseup', up);
          };
          addEventListener('mousemove', move);
          addEventListener('mouseup', up);
        }, true);
      },
    },
  };
}

export function TimeSeriesChart({ aligned, series, responseMark, onView }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const onViewRef = useRef(onView);
  onViewRef.current = onView;

  useEffect(() => {
    const el = host.current!;
    let firstDraw = true;
    const report = (u: uPlot) => {
      const shown = u.series.slice(1).flatMap((s, i) => (s.show ? [i] : []));
      const view = { min: u.scales.x!.min ?? -Infinity, max: u.scales.x!.max ?? Infinity, shown };
      el.dataset.min = String(view.min);
      el.dataset.max = String(view.max);
      el.dataset.shown = shown.join(',');
      publish('chart', { x: aligned.x, ys: aligned.ys, labels: series.map((s) => s.label), min: view.min, max: view.max, shown });
      onViewRef.current?.(view);
    };
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: 380,
      tzDate: utc,
      scales: { x: { time: true } },
      cursor: { drag: { x: true, y: false, setScale: true }, focus: { prox: 16 } },
      focus: { alpha: 0.4 },
      legend: { live: true },
      axes: [{}, { size: 70 }],
      series: [
        { label: 'Time (UTC)', value: '{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 1.5,
          dash: s.dashed ? [6, 4] : undefined,
          spanGaps: false,
          points: { show: false },
        })),
      ],
      plugins: [panAndWheel()],
      hooks: {
        draw: [
          (u) => {
            if (!firstDraw) return;
            firstDraw = false;
            performance.mark('flex:chart-drawn');
            if (responseMark && performance.getEntriesByName(responseMark).length > 0) {
              const m = performance.measure('flex:response-to-drawn', responseMark, 'flex:chart-drawn');
              publish('drawTiming', { ms: m.duration, points: aligned.x.length * series.length });
              el.dataset.drawMs = m.duration.toFixed(1);
            }
            report(u);
          },
        ],
        setScale: [(u, key) => key === 'x' && !firstDraw && report(u)],
        setSeries: [(u) => report(u)],
      },
    };
    const u = new uPlot(opts, [aligned.x, ...aligned.ys] as uPlot.AlignedData, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(320, el.clientWidth), height: 380 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = undefined;
    };
  }, [aligned, series]);

  return <div class="chart" ref={host} data-testid="chart" data-points={aligned.x.length} />;
}
