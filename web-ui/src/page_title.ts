// The heading of the terminal and replay pages: an execution's name or its
// whole command, which can be a long script. On a narrow window terminal.css
// clamps it to two lines so the terminal keeps the screen; the full text is
// its tooltip, and a tap or click shows it all (and clamps it again).

export function showPageTitle(element: HTMLElement, text: string): void {
  if (element.textContent === text) return;
  element.textContent = text;
  element.title = text;
  if (element.dataset.expandable === undefined) {
    element.dataset.expandable = "";
    element.addEventListener("click", () => {
      element.dataset.expanded = element.dataset.expanded === "yes" ? "no" : "yes";
    });
  }
}
