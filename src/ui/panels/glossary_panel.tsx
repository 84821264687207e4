// Glossary: every term the app uses in plain words, with a small diagram of one parameter's
// life under FSDP (shard → all-gather → compute → free → reduce-scatter of its gradient).

import { TERMS } from '../glossary';

const LIFE: readonly { readonly label: string; readonly note: string; readonly kind: string }[] = [
  { label: 'shard', note: '1/N kept', kind: 'shard' },
  { label: 'all-gather', note: 'collect N shards', kind: 'all_gather' },
  { label: 'compute', note: 'layer uses it', kind: 'compute' },
  { label: 'free', note: 'full copy dropped', kind: 'free' },
  { label: 'reduce-scatter', note: 'sum grads, keep 1/N', kind: 'reduce_scatter' },
];

/** One parameter's life, left to right: boxes for the states, arrows for time. */
function LifeDiagram() {
  const w = 104;
  const gap = 18;
  return (
    <svg
      className="life"
      viewBox={`0 0 ${LIFE.length * (w + gap) - gap} 54`}
      role="img"
      data-testid="life-diagram"
      aria-label="One parameter's life: shard, all-gather, compute, free, reduce-scatter of its gradient"
    >
      {LIFE.map((s, i) => {
        const x = i * (w + gap);
        return (
          <g key={s.label} className={`life-${s.kind}`}>
            <rect x={x} y={4} width={w} height={40} rx={5} />
            <text x={x + w / 2} y={21} textAnchor="middle" className="life-label">
              {s.label}
            </text>
            <text x={x + w / 2} y={36} textAnchor="middle" className="life-note">
              {s.note}
            </text>
            {i < LIFE.length - 1 && (
              <path d={`M${x + w + 2} 24 h${gap - 6} l-4 -4 m4 4 l-4 4`} className="life-arrow" />
            )}
          </g>
        );
      })}
    </svg>
  );
}

export function GlossaryPanel({ onClose }: { onClose: () => void }) {
  return (
    <section className="panel glossary" data-testid="glossary" aria-labelledby="glossary-title">
      <div className="panel-head">
        <h2 id="glossary-title">Glossary</h2>
        <button
          type="button"
          className="link"
          onClick={onClose}
          data-testid="glossary-close"
          aria-label="close the glossary"
        >
          close
        </button>
      </div>
      <p className="small">
        One parameter's life in a step: each rank keeps a shard; before a layer runs, an all-gather rebuilds the full
        weight; the layer computes; the full copy is freed; in the backward, its gradient is reduce-scattered so each
        rank keeps the sum of its own slice.
      </p>
      <LifeDiagram />
      <dl className="terms">
        {TERMS.map((t) => (
          <div key={t.id} data-term-def={t.id}>
            <dt>{t.term}</dt>
            <dd>{t.text}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
