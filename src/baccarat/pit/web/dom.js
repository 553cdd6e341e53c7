// What the console's page modules share to build the page: an element by id, and a new
// element with its attributes and children.

export const $ = (id) => document.getElementById(id);

/** A new `tag` element: attributes (class, data-*, else properties), then its children. */
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class") node.className = value;
    else if (name.startsWith("data-")) node.setAttribute(name, value);
    else node[name] = value;
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}
