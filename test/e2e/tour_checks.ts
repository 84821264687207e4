// Checks shared by the tour's e2e tests (desktop and touch): the card against the element it
// outlines, and the controls its text names against what the page shows.

import type { Page } from 'playwright-core';

/** null when the tour card and its outlined target do not overlap (and the card is on screen); else why. */
export async function cardOverlapsTarget(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const card = document.querySelector<HTMLElement>('[data-testid="tour"]')!.getBoundingClientRect();
    const el = document.querySelector<HTMLElement>('.tour-target');
    if (!el) return 'no outlined target';
    const t = el.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    if (card.left < 0 || card.top < 0 || card.right > vw || card.bottom > window.innerHeight) return 'card off screen';
    const apart = card.right <= t.left || t.right <= card.left || card.bottom <= t.top || t.bottom <= card.top;
    const r = (b: DOMRect) => `[${[b.left, b.top, b.right, b.bottom].map((x) => x.toFixed(0)).join(', ')}]`;
    return apart ? null : `card ${r(card)} overlaps ${el.dataset.testid ?? el.className} ${r(t)}`;
  });
}

/** Controls the current step names (bold in its text) that no visible button, select or heading carries. */
export async function namedControlsMissing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const names = [...document.querySelectorAll('#tour-text .tour-control')].map((b) => (b.textContent ?? '').trim());
    const visible = (e: HTMLElement) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const shown = [...document.querySelectorAll<HTMLElement>('button, select, summary, h2')]
      .filter((e) => !e.closest('[data-testid="tour"]') && visible(e))
      .map((e) => (e instanceof HTMLSelectElement ? (e.options[0]?.text ?? '') : (e.textContent ?? '')).trim());
    return names.filter((n) => !shown.some((t) => t === n || t.startsWith(n)));
  });
}
