// A paged table: the rows the chart shows, page by page (a year of 15-minute readings is 35,040
// rows; the DOM holds one page at a time).
import { useState } from 'preact/hooks';

interface Props {
  header: readonly string[];
  rowCount: number;
  row: (index: number) => readonly (string | number)[];
  pageSize?: number;
  testId?: string;
}

export function DataTable({ header, rowCount, row, pageSize = 200, testId }: Props) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(rowCount / pageSize));
  const current = Math.min(page, pages - 1);
  const first = current * pageSize;
  const last = Math.min(rowCount, first + pageSize);
  const rows = [];
  for (let i = first; i < last; i += 1) rows.push(row(i));
  return (
    <div class="table-wrap" data-testid={testId} data-rows={rowCount}>
      <table>
        <thead>
          <tr>
            {header.map((h) => (
              <th>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((cells) => (
            <tr>
              {cells.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 ? (
        <div class="pager">
          <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>
            ‹ Previous
          </button>
          <span>
            Rows {first + 1}–{last} of {rowCount}
          </span>
          <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
            Next ›
          </button>
        </div>
      ) : (
        <div class="pager">{rowCount} rows</div>
      )}
    </div>
  );
}
