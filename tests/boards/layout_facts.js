// The whole columns each road shows, and the boxes of the alarm banner and of the panels
// it must not cover (all but the last result). Run in the page by test_web_layout.py.
(() => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const columns = {};
  for (const grid of document.querySelectorAll('[data-road]')) {
    const cell = parseFloat(getComputedStyle(grid).gridTemplateRows);
    columns[grid.dataset.road] = Math.floor((grid.parentElement.clientWidth + 0.5) / cell);
  }
  const banner = document.getElementById('alarm-banner');
  return {
    columns,
    banner: banner.hidden ? null : rect(banner),
    banner_text: banner.innerText,
    header_fit: document.querySelector('.topbar').dataset.fit,
    covered: Object.fromEntries([...document.querySelectorAll('.panel:not(.last-result)')]
      .map((p) => [p.id || [...p.classList].join('.'), rect(p)])),
  };
})()
