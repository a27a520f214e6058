/** The toast region: one toast at a time (the newest replaces the last), auto-close after 5 s, swipe right to dismiss, F8 to focus. */
import { useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { dismissToast, subscribeToasts, type ToastMessage } from './toast-store.ts';
import { showQueuedToast } from './flash-toast.ts';

/** Auto-close delay, swipe threshold and hotkey (docs/product.md, Interface rules: timings and sizes). */
export const TOAST_DURATION_MS = 5000;
export const SWIPE_THRESHOLD_PX = 50;
const HOTKEY = 'F8';

export default function Toaster() {
  const [current, setCurrent] = useState<ToastMessage | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const [paused, setPaused] = useState(false);
  const regionRef = useRef<HTMLDivElement>(null);
  const swipeStart = useRef<number | undefined>(undefined);

  useEffect(() => {
    const unsubscribe = subscribeToasts((next) => {
      setCurrent(next);
      setOffset(0);
    });
    showQueuedToast();
    return unsubscribe;
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === HOTKEY) {
        event.preventDefault();
        regionRef.current?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!current || paused) return;
    const id = current.id;
    const timer = window.setTimeout(() => dismissToast(id), TOAST_DURATION_MS);
    return () => window.clearTimeout(timer);
  }, [current, paused]);

  const onPointerDown = (event: ReactPointerEvent<HTMLDivElement>) => {
    swipeStart.current = event.clientX;
    event.currentTarget.setPointerCapture?.(event.pointerId);
  };
  const onPointerMove = (event: ReactPointerEvent<HTMLDivElement>) => {
    if (swipeStart.current === undefined) return;
    setOffset(Math.max(0, event.clientX - swipeStart.current));
  };
  const onPointerEnd = (event: ReactPointerEvent<HTMLDivElement>) => {
    if (swipeStart.current === undefined) return;
    const distance = event.clientX - swipeStart.current;
    swipeStart.current = undefined;
    if (distance >= SWIPE_THRESHOLD_PX && current) dismissToast(current.id);
    else setOffset(0);
  };

  return (
    <section aria-label="Notifications (F8)" className="toast-section">
      <div
        ref={regionRef}
        tabIndex={-1}
        className="toast-viewport"
        role="status"
        aria-live="polite"
        aria-atomic="true"
        data-testid="toast-region"
      >
        {current && (
          <div
            key={current.id}
            className={`toast${current.variant === 'destructive' ? ' toast-destructive' : ''}`}
            data-testid="toast"
            data-variant={current.variant}
            style={offset ? { transform: `translateX(${offset}px)`, opacity: Math.max(0.2, 1 - offset / 200) } : undefined}
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={onPointerEnd}
            onPointerCancel={() => {
              swipeStart.current = undefined;
              setOffset(0);
            }}
            onMouseEnter={() => setPaused(true)}
            onMouseLeave={() => setPaused(false)}
            onFocus={() => setPaused(true)}
            onBlur={() => setPaused(false)}
          >
            <div className="toast-title">{current.title}</div>
            {current.description && <div className="toast-description">{current.description}</div>}
            <button type="button" className="toast-close" aria-label="Close notification" onClick={() => dismissToast(current.id)}>
              ×
            </button>
          </div>
        )}
      </div>
    </section>
  );
}
