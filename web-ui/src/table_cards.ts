// The dashboard's tables on a phone: dashboard.css shows each row as a card
// and each value under its column's header text, taken from the cell's
// data-label attribute (set here from the table's own header row, so the
// names are written once, in index.html).

// Labels the cells of `row` but those whose class is in `unlabelled` (cells
// that say what they are by themselves).
export function labelCells(table: HTMLTableElement, row: HTMLTableRowElement, unlabelled: string[]): void {
  const headers = Array.from(table.tHead?.rows[0]?.cells ?? [], (cell) => cell.textContent ?? "");
  Array.from(row.cells).forEach((cell, index) => {
    if (headers[index] && !unlabelled.includes(cell.className)) cell.dataset.label = headers[index];
  });
}
