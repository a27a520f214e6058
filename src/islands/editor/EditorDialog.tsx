/** A modal dialog of the visual editor on the native <dialog>: focus stays inside, Escape closes, focus returns after. */
import { useEffect, useRef, type FormEvent, type ReactNode } from 'react';

type Props = {
  title: string;
  onClose: () => void;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  children: ReactNode;
  testId: string;
};

export function EditorDialog({ title, onClose, onSubmit, children, testId }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = `${testId}-title`;
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className="ve-dialog"
      aria-labelledby={titleId}
      data-testid={testId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <form
        className="adm-form-stack"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(event);
        }}
      >
        <h2 id={titleId} className="adm-card-title">
          {title}
        </h2>
        {children}
      </form>
    </dialog>
  );
}
