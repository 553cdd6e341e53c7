// What is wrong with the web board's layout, as a list of sentences (empty: nothing).
// Run in the page by tests/boards/test_web_layout.py. Every visible element against the
// screen and against the panel (or header, banner, overlay box) it belongs to; text cut by
// its own box; the page scrolling; road cells either whole in their road's window or
// scrolled out of it (the earlier columns), never half shown; the header in one row.
(() => {
  const W = innerWidth, H = innerHeight;
  const problems = [];
  const name = (el) => el.id ? `#${el.id}` : el.tagName.toLowerCase()
    + [...el.classList].map((c) => `.${c}`).join('')
    + (el.dataset.label ? `[${el.dataset.label}]` : '')
    + (el.dataset.position ? `[${el.dataset.position}]` : '');
  const where = (el) => { let s = ''; for (let e = el; e && e !== document.body; e = e.parentElement) s = ` ${name(e)}` + s; return s.trim(); };
  const box = (r) => `${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}`;
  const inside = (r, c) => r.left >= c.left - 0.5 && r.top >= c.top - 0.5
    && r.right <= c.right + 0.5 && r.bottom <= c.bottom + 0.5;
  const apart = (r, c) => r.right <= c.left + 0.5 || r.left >= c.right - 0.5
    || r.bottom <= c.top + 0.5 || r.top >= c.bottom - 0.5;
  const shown = (el) => {
    if (!el.checkVisibility({visibilityProperty: true})) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const screen = {left: 0, top: 0, right: W, bottom: H};
  const frames = '.panel, .alarm-banner, .topbar, .overlay-box';
  for (const el of document.body.querySelectorAll('*')) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    const road = el.closest('.road');
    if (road) {
      if (el === road) continue;  // the whole road sheet, scrolled in its window by design
      const view = road.parentElement.getBoundingClientRect();
      if (!inside(r, view) && !apart(r, view)) problems.push(`${where(el)} half shown at ${box(r)}`);
      continue;
    }
    if (!inside(r, screen)) problems.push(`${where(el)} off the screen at ${box(r)}`);
    const frame = el.parentElement && el.parentElement.closest(frames);
    if (frame && !inside(r, frame.getBoundingClientRect())) {
      problems.push(`${where(el)} sticks out of ${name(frame)}: ${box(r)} in ${box(frame.getBoundingClientRect())}`);
    }
    const style = getComputedStyle(el);
    const clips = style.overflowX !== 'visible' || style.overflowY !== 'visible';
    if (clips && !el.classList.contains('road-view') && !el.classList.contains('share')
        && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)) {
      problems.push(`${where(el)} cuts its text: ${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight}`);
    }
  }
  // The header in one row: every item of it beside the others, none below another.
  const items = [...document.querySelector('.topbar').children].filter(shown)
    .map((el) => [el, el.getBoundingClientRect()]);
  const firstBottom = Math.min(...items.map(([, r]) => r.bottom));
  for (const [el, r] of items) {
    if (r.top >= firstBottom - 0.5) problems.push(`the header takes a second row: ${where(el)} at ${box(r)}`);
  }
  const page = document.scrollingElement;
  if (page.scrollWidth > W || page.scrollHeight > H) problems.push(`the page scrolls: ${page.scrollWidth}x${page.scrollHeight}`);
  return problems;
})()
