// What the pit console shows in its own words, run in the page by test_pit_labels.py: the
// visible text and the title, aria-label and placeholder of every visible element, except
// what is marked as another's text (lang="en": the controller's alarm text and refusals,
// the server's errors). Returns {text, english}: all of it, and the English words in it
// once `data` (table names, the operator, areas, currencies ...) is taken out.
((data) => {
  const parts = [];
  const foreign = (node) => !!(node.closest && node.closest('[lang="en"]:not(html)'));
  const shown = (el) => el.checkVisibility({visibilityProperty: true});
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || !shown(el) || foreign(el) || !node.textContent.trim()) continue;
    if (el.closest('script, style')) continue;
    parts.push(node.textContent);
  }
  for (const el of document.body.querySelectorAll('[title], [aria-label], [placeholder]')) {
    if (foreign(el) || !(shown(el) || el.closest('dialog[open]'))) continue;
    for (const name of ['title', 'aria-label', 'placeholder']) {
      if (el.getAttribute(name)) parts.push(el.getAttribute(name));
    }
  }
  parts.push(document.title);
  let text = parts.join('\n');
  let rest = text;
  for (const known of [...data].sort((a, b) => b.length - a.length)) rest = rest.split(known).join(' ');
  rest = rest.replace(/\d+(?:\.\d+)?[kKMB]\b/g, ' ');  // short figures: 50k, 1M
  return {text, english: [...new Set(rest.match(/[A-Za-z][A-Za-z'’]*/g) || [])]};
})
