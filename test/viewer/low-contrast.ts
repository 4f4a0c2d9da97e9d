/**
 * In the page (a script: the tests are not compiled against the DOM's types): each element with text of its own whose colour, faded by the opacity of it and its
 * ancestors, has less than 4.5:1 contrast against the first opaque background behind it.
 */
export const lowContrastTexts = String.raw`
(() => {
  const rgb = (value) => (value.match(/[\d.]+/g) ?? []).map(Number);
  const luminance = ([r, g, b]) => {
    const channel = (value) => {
      const c = value / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  const failures = [];
  for (const element of document.querySelectorAll("#app *")) {
    if (element instanceof SVGElement) continue;
    const ownText = [...element.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && child.textContent.trim() !== "");
    if (!ownText || element.getClientRects().length === 0) continue;
    let background;
    let opacity = 1;
    for (let node = element; node !== null; node = node.parentElement) {
      const style = getComputedStyle(node);
      opacity *= Number(style.opacity);
      const color = rgb(style.backgroundColor);
      if (background === undefined && (color[3] ?? 1) === 1) background = color;
    }
    background ??= rgb(getComputedStyle(document.body).backgroundColor);
    const foreground = rgb(getComputedStyle(element).color).slice(0, 3).map((value, index) => value * opacity + background[index] * (1 - opacity));
    const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
    const ratio = (light + 0.05) / (dark + 0.05);
    if (ratio < 4.5) failures.push(element.tagName.toLowerCase() + "." + [...element.classList].join(".") + ' "' + element.textContent.trim().slice(0, 20) + '": ' + ratio.toFixed(2));
  }
  return [...new Set(failures)];
})()
`;
