// A defined word (a metric name, a legend item): its definition opens on hover, on keyboard
// focus and on a tap, in a card placed under the word and kept inside the viewport. Escape, a
// second tap or a tap elsewhere closes it. The card is portalled to <body>, so no table cell or
// panel clips it or widens.

import { type ReactNode, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';

const MARGIN_PX = 8;

interface Props {
  /** The definition: 'all-gather: A collective that …'. */
  readonly def: string;
  /** Glossary id, for tests and styling. */
  readonly term?: string;
  readonly children: ReactNode;
}

/** Card position in page coordinates: below the word, shifted left to stay on screen. */
function place(anchor: HTMLElement, card: HTMLElement): void {
  const a = anchor.getBoundingClientRect();
  const w = card.offsetWidth;
  const left = Math.max(MARGIN_PX, Math.min(a.left, document.documentElement.clientWidth - w - MARGIN_PX));
  const below = a.bottom + 6;
  const above = a.top - 6 - card.offsetHeight;
  const top = below + card.offsetHeight > window.innerHeight && above > 0 ? above : below;
  card.style.left = `${left + window.scrollX}px`;
  card.style.top = `${top + window.scrollY}px`;
}

export function DefinedTerm({ def, term, children }: Props) {
  const [open, setOpen] = useState(false);
  const pinned = useRef(false); // opened by a tap or click: hover-out leaves it open
  const wasOpen = useRef(false); // open when the pointer went down: that tap closes it
  const ref = useRef<HTMLButtonElement>(null);
  const cardRef = useRef<HTMLSpanElement>(null);
  const id = useId();
  useLayoutEffect(() => {
    if (open && ref.current && cardRef.current) place(ref.current, cardRef.current);
  }, [open]);
  useEffect(() => {
    if (!open) return;
    const outside = (e: PointerEvent) => {
      if (!ref.current?.contains(e.target as Node)) close();
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close();
    };
    const close = () => {
      pinned.current = false;
      setOpen(false);
    };
    document.addEventListener('pointerdown', outside, true);
    document.addEventListener('keydown', key);
    window.addEventListener('resize', close);
    return () => {
      document.removeEventListener('pointerdown', outside, true);
      document.removeEventListener('keydown', key);
      window.removeEventListener('resize', close);
    };
  }, [open]);
  return (
    <button
      type="button"
      ref={ref}
      className="term"
      data-term={term}
      data-def={def}
      aria-expanded={open}
      aria-describedby={open ? id : undefined}
      onPointerDown={() => {
        wasOpen.current = open && pinned.current;
      }}
      onClick={() => {
        pinned.current = !wasOpen.current;
        setOpen(!wasOpen.current);
        wasOpen.current = false;
      }}
      onFocus={() => setOpen(true)}
      onBlur={() => {
        pinned.current = false;
        setOpen(false);
      }}
      onMouseEnter={() => setOpen(true)}
      onMouseLeave={() => {
        if (!pinned.current && document.activeElement !== ref.current) setOpen(false);
      }}
    >
      {children}
      {open &&
        createPortal(
          <span className="term-card" role="tooltip" id={id} ref={cardRef} data-testid="term-card">
            {def}
          </span>,
          document.body,
        )}
    </button>
  );
}
