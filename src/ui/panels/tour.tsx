// First-visit tour: six short steps (the two timelines, what B does differently, a collective,
// the metrics, the knobs, Run live), each outlining its target with its card beside it, never
// over it. Skippable (Skip, Escape), shown once per browser (localStorage), reopened by Tour.

import { type RefObject, useEffect, useLayoutEffect, useRef } from 'react';
import type { SideResult } from '../../store';
import { useApp } from '../use_app';
import { type InputKind, useInputKind } from '../input_kind';
import { defineVerb, selectVerb, whatBDoes } from '../tour_text';

const TOUR_DONE_KEY = 'fsdp-sim:tour-done';

/** What a step's text is made of: words, and the names of controls it points the reader to (drawn bold). */
type TourSegment = string | { readonly control: string };

interface TourContext {
  readonly a: SideResult | null;
  readonly b: SideResult | null;
  readonly input: InputKind;
}

interface Step {
  /** CSS selectors of the element to outline, first visible wins (the config hides in a drawer on phones). */
  readonly target: readonly string[];
  readonly title: string;
  readonly text: (c: TourContext) => readonly TourSegment[];
}

export const TOUR_STEPS: readonly Step[] = [
  {
    target: ['[data-testid="timeline-a"]'],
    title: 'Two timelines, one training step',
    text: ({ a, b }) => [
      `A runs ${a?.title ?? 'aot_eager'}, B runs ${b?.title ?? 'aot_eager_autobucketing'}, on the same model and `,
      "cluster. Each row is one rank's compute or communication stream; time runs left to right.",
    ],
  },
  { target: ['[data-testid="timeline-b"]'], title: 'What B does differently', text: ({ a, b }) => [whatBDoes(a, b)] },
  {
    target: ['[data-testid="timeline-b"]'],
    title: 'A collective',
    text: ({ input }) => [
      "Green all-gathers fetch a layer's weights from the other ranks; orange reduce-scatters share gradients. ",
      'Red is exposed communication: the GPU waits while a collective runs; purple, a wait for a peer that has ',
      `not started it yet. ${selectVerb(input)} one: arrows show its wait and the layer `,
      'that uses it, and ',
      { control: 'Explain' },
      ' says why it was scheduled so.',
    ],
  },
  {
    target: ['[data-testid="metrics"]'],
    title: 'The numbers',
    text: ({ input }) => [
      'Step time, exposed communication, overlap and the memory peaks (live tensors, allocated, reserved) ' +
        "for A and B, and B's change against A. ",
      `${defineVerb(input)} a row name for its definition.`,
    ],
  },
  {
    target: ['[data-testid="config"]', '[data-testid="drawer-toggle"]'],
    title: 'The knobs',
    text: ({ input }) => [
      ...(input === 'touch' ? [{ control: 'Config' }, ' opens the knobs: model'] : ['Model']),
      ", ranks, network and every autobucketing knob with torch's defaults. ",
      `${input === 'touch' ? 'Tap' : 'Focus or hover'} one to read what it does and what raising it costs. `,
      { control: 'Stories' },
      ' (top) load ready-made scenarios.',
    ],
  },
  {
    target: ['[data-testid="live-run"]'],
    title: 'Run it for real',
    text: () => [
      { control: 'Run live' },
      ' trains the tiny model on Web Workers, one per rank, with WebGPU kernels and real ',
      'all-gathers through shared memory. ',
      { control: 'Tour' },
      ' reopens this tour, ',
      { control: 'Glossary' },
      ' defines the words, ',
      { control: 'Learn one layer' },
      ' walks one block op by op.',
    ],
  },
];

export function tourDone(): boolean {
  try {
    return localStorage.getItem(TOUR_DONE_KEY) === '1';
  } catch {
    return true; // no storage (privacy mode): do not nag on every visit
  }
}

function markDone(): void {
  try {
    localStorage.setItem(TOUR_DONE_KEY, '1');
  } catch {
    // storage refused: the tour simply shows again next time
  }
}

const GAP_PX = 10;

type Placement = 'below' | 'above' | 'right' | 'left' | 'scrolled';

/** Where the card goes: beside its target, never over it; a target taller than the room left scrolls under it. */
function placeCard(card: HTMLElement, target: HTMLElement, mayScroll: boolean): Placement {
  const vw = document.documentElement.clientWidth;
  const vh = window.innerHeight;
  const w = card.offsetWidth;
  const h = card.offsetHeight;
  let r = target.getBoundingClientRect();
  const clampX = (x: number) => Math.max(GAP_PX, Math.min(x, vw - w - GAP_PX));
  const clampY = (y: number) => Math.max(GAP_PX, Math.min(y, vh - h - GAP_PX));
  const put = (left: number, top: number, p: Placement): Placement => {
    card.style.left = `${left}px`;
    card.style.top = `${top}px`;
    return p;
  };
  const midX = clampX(r.left + r.width / 2 - w / 2);
  if (r.bottom + GAP_PX + h <= vh - GAP_PX) return put(midX, r.bottom + GAP_PX, 'below');
  if (r.top - GAP_PX - h >= GAP_PX) return put(midX, r.top - GAP_PX - h, 'above');
  if (vw - r.right - 2 * GAP_PX >= w) return put(r.right + GAP_PX, clampY(r.top), 'right');
  if (r.left - 2 * GAP_PX >= w) return put(r.left - GAP_PX - w, clampY(r.top), 'left');
  if (!mayScroll) return put(midX, GAP_PX, 'scrolled');
  window.scrollBy(0, r.top - (h + 2 * GAP_PX)); // the target starts just below the card
  r = target.getBoundingClientRect();
  return put(midX, Math.max(GAP_PX, r.top - GAP_PX - h), 'scrolled');
}

function visibleTarget(selectors: readonly string[]): HTMLElement | undefined {
  return selectors
    .map((q) => document.querySelector<HTMLElement>(q))
    .find((e): e is HTMLElement => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden');
}

function Segments({ segs }: { segs: readonly TourSegment[] }) {
  return (
    <>
      {segs.map((x, i) =>
        typeof x === 'string' ? (
          x
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: one step's fixed segments, in order
          <b key={i} className="tour-control">
            {x.control}
          </b>
        ),
      )}
    </>
  );
}

export function Tour({ step, onStep, onClose }: { step: number; onStep: (k: number) => void; onClose: () => void }) {
  const s = TOUR_STEPS[step];
  const a = useApp((st) => st.sides.a);
  const b = useApp((st) => st.sides.b);
  const input = useInputKind();
  const nextRef = useRef<HTMLButtonElement>(null);
  const cardRef = useRef<HTMLDivElement>(null);
  const close = () => {
    markDone();
    onClose();
  };
  const segs = s.text({ a, b, input });
  const words = segs.map((x) => (typeof x === 'string' ? x : x.control)).join(''); // re-place when they change
  usePlacedCard(s, words, cardRef, nextRef);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        markDone();
        onClose();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div
      className="tour"
      role="dialog"
      aria-labelledby="tour-title"
      aria-describedby="tour-text"
      data-testid="tour"
      data-step={step}
      ref={cardRef}
    >
      <div className="tour-head">
        <b id="tour-title">{s.title}</b>
        <span className="muted small">
          {step + 1} / {TOUR_STEPS.length}
        </span>
      </div>
      <p id="tour-text">
        <Segments segs={segs} />
      </p>
      <TourButtons step={step} onStep={onStep} close={close} nextRef={nextRef} />
    </div>
  );
}

interface TourButtonsProps {
  readonly step: number;
  readonly onStep: (k: number) => void;
  readonly close: () => void;
  readonly nextRef: RefObject<HTMLButtonElement | null>;
}

/** Skip, Back (after the first step), and Next (Done on the last step). */
function TourButtons({ step, onStep, close, nextRef }: TourButtonsProps) {
  const last = step === TOUR_STEPS.length - 1;
  return (
    <div className="tour-buttons">
      <button type="button" className="link" onClick={close} data-testid="tour-skip">
        Skip tour
      </button>
      {step > 0 && (
        <button type="button" onClick={() => onStep(step - 1)} data-testid="tour-back">
          Back
        </button>
      )}
      <button
        type="button"
        className="primary"
        ref={nextRef}
        onClick={() => (last ? close() : onStep(step + 1))}
        data-testid="tour-next"
      >
        {last ? 'Done' : 'Next'}
      </button>
    </div>
  );
}

/**
 * Outlines the step's target and places the card beside it (scrolling once if it fits nowhere),
 * again on resize and scroll; focuses Next.
 */
function usePlacedCard(
  s: Step,
  words: string,
  cardRef: RefObject<HTMLDivElement | null>,
  nextRef: RefObject<HTMLButtonElement | null>,
): void {
  // biome-ignore lint/correctness/useExhaustiveDependencies: words change the card's height: place it again
  useLayoutEffect(() => {
    const el = visibleTarget(s.target);
    const card = cardRef.current;
    el?.classList.add('tour-target');
    el?.scrollIntoView({ block: 'nearest' });
    if (el && card) card.dataset.placed = placeCard(card, el, true);
    nextRef.current?.focus({ preventScroll: true });
    const again = () => {
      if (el && card) card.dataset.placed = placeCard(card, el, false);
    };
    window.addEventListener('resize', again);
    window.addEventListener('scroll', again, { passive: true });
    return () => {
      el?.classList.remove('tour-target');
      window.removeEventListener('resize', again);
      window.removeEventListener('scroll', again);
    };
  }, [s, words]);
}
