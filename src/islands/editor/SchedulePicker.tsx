/** 'Schedule Publication' date-and-time picker: a 'Pick a date' button opening a date and a time field. */
import { useId, useState } from 'react';
import { formatLongDateTime } from '../admin/admin-format.ts';
import { scheduledDateOf } from './editor-form.ts';

type Props = {
  date: string;
  time: string;
  onChange: (value: { scheduleDate: string; scheduleTime: string }) => void;
};

export function SchedulePicker({ date, time, onChange }: Props) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const chosen = scheduledDateOf({ scheduleDate: date, scheduleTime: time });
  const label = chosen ? formatLongDateTime(chosen) : date ? `${date} (no time)` : 'Pick a date';

  return (
    <section className="adm-card" aria-labelledby={`${panelId}-title`}>
      <h2 id={`${panelId}-title`} className="adm-card-title">
        Publishing
      </h2>
      <div className="adm-field">
        <span id={`${panelId}-label`}>Schedule Publication</span>
        <button
          type="button"
          className={`adm-btn adm-btn-outline adm-btn-block adm-date-button${chosen ? '' : ' adm-placeholder'}`}
          aria-expanded={open}
          aria-controls={panelId}
          aria-labelledby={`${panelId}-label ${panelId}-value`}
          onClick={() => setOpen((isOpen) => !isOpen)}
        >
          <svg
            aria-hidden="true"
            width="16"
            height="16"
            viewBox="0 0 24 24"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
            strokeLinecap="round"
            strokeLinejoin="round"
          >
            <rect x="3" y="4" width="18" height="18" rx="2" />
            <path d="M16 2v4M8 2v4M3 10h18" />
          </svg>
          <span id={`${panelId}-value`}>{label}</span>
        </button>
      </div>
      {open && (
        <div id={panelId} className="adm-date-panel">
          <label className="adm-field">
            <span>Publish date</span>
            <input type="date" value={date} onChange={(e) => onChange({ scheduleDate: e.target.value, scheduleTime: time })} />
          </label>
          <label className="adm-field">
            <span>Publish time</span>
            <input type="time" value={time} onChange={(e) => onChange({ scheduleDate: date, scheduleTime: e.target.value })} />
          </label>
          <div className="adm-actions">
            <button type="button" className="adm-btn adm-btn-primary adm-btn-sm" onClick={() => setOpen(false)}>
              Done
            </button>
            <button
              type="button"
              className="adm-btn adm-btn-ghost adm-btn-sm"
              onClick={() => {
                onChange({ scheduleDate: '', scheduleTime: time });
                setOpen(false);
              }}
            >
              Clear date
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
