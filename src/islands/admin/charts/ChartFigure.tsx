/** A dashboard chart with its text alternatives: a one-line summary, the table of its values behind a toggle, and that table as CSV. */
import { useId, useState, type ReactNode } from 'react';
import { toCsv, type ChartTable } from './chart-table.ts';

type ChartFigureProps = {
  title: string;
  /** The chart in one sentence, read by everyone (and the only thing a screen reader needs besides the table). */
  summary: string;
  table: ChartTable;
  /** The CSV file's name, without extension. */
  fileName: string;
  /** Controls beside the title (a period switch). */
  controls?: ReactNode;
  /** The colour key under the chart. */
  legend?: { label: string; color: string }[];
  children: ReactNode;
  testId?: string;
};

/** Offers a CSV to download through a Blob URL, freed once the click has used it. */
function downloadCsv(table: ChartTable, fileName: string): void {
  const url = URL.createObjectURL(new Blob([toCsv(table)], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${fileName}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function ChartFigure({ title, summary, table, fileName, controls, legend, children, testId }: ChartFigureProps) {
  const [showTable, setShowTable] = useState(false);
  const headingId = useId();
  const tableId = useId();
  return (
    <section className="adm-card adm-chart" aria-labelledby={headingId} data-testid={testId}>
      <div className="adm-chart-head">
        <h3 id={headingId} className="adm-card-title">
          {title}
        </h3>
        {controls}
      </div>
      <p className="adm-muted adm-chart-summary">{summary}</p>
      {children}
      {legend && legend.length > 0 && (
        <ul className="adm-chart-legend" aria-label={`${title} key`}>
          {legend.map((item) => (
            <li key={item.label}>
              <span className="adm-chart-swatch" style={{ background: `var(${item.color})` }} />
              {item.label}
            </li>
          ))}
        </ul>
      )}
      <div className="adm-actions">
        <button
          type="button"
          className="adm-btn adm-btn-outline adm-btn-sm"
          aria-expanded={showTable}
          aria-controls={tableId}
          onClick={() => setShowTable((shown) => !shown)}
        >
          {showTable ? 'Hide table' : 'Show table'}
        </button>
        <button type="button" className="adm-btn adm-btn-outline adm-btn-sm" onClick={() => downloadCsv(table, fileName)}>
          Download CSV
        </button>
      </div>
      {/* eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a wide table scrolls: keyboard users must reach it */}
      <div id={tableId} className="adm-chart-table" hidden={!showTable} role="region" aria-label={`${title} table`} tabIndex={0}>
        {showTable && (
          <table>
            <caption className="adm-sr-only">{title}</caption>
            <thead>
              <tr>
                {table.columns.map((column) => (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, index) => (
                <tr key={index}>
                  {row.map((cell, i) =>
                    i === 0 ? (
                      <th key={i} scope="row">
                        {cell}
                      </th>
                    ) : (
                      <td key={i}>{typeof cell === 'number' ? cell.toLocaleString('en-US') : cell}</td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
